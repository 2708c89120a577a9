(* A connection's pending output and the one walk over it (see the .mli).
   The walk is a functor over the transport's writes: applied once per
   transport, no closure per call. *)

open Slot

type result = Flushed | Blocked | Dead
type segment = Nothing | Head | Head_string | Head_bigstring | File | Gathered | Unsent

(* Records the transport made but did not send are pending once no more
   output is announced: while it is, the write that comes next takes them
   along. *)
let[@inline] unsent_due c = if c.more_output then 0 else c.unsent

let pending c = c.out_len - c.out_sent + c.gather.bytes + c.ext_len + unsent_due c

let segment c =
  if Gather.active c.gather then Gathered else
  let out_rem = c.out_len - c.out_sent in
  if c.ext_len = 0 then (if out_rem > 0 then Head else if unsent_due c > 0 then Unsent else Nothing)
  else
    match c.ext with
    | Ext_string -> Head_string
    | Ext_bigstring -> Head_bigstring
    | Ext_file -> if out_rem > 0 then Head else File
    | No_ext -> Head

(* [n] written bytes through the gathered pieces and the frames of [out]
   around them: what is left of [n] (past the last piece) is [out]'s rest
   and [ext]'s. *)
let consume_gather c n =
  let g = c.gather in
  let n = ref n in
  while !n > 0 && Gather.active g do
    let i = g.first in
    let before = Gather.pos g i - c.out_sent in
    if before > 0 then begin
      let k = if !n < before then !n else before in
      c.out_sent <- c.out_sent + k;
      n := !n - k
    end
    else begin
      let len = Gather.len g i in
      let k = if !n < len then !n else len in
      Gather.wrote g i k;
      n := !n - k
    end
  done;
  !n

let advance c n =
  c.sent <- c.sent + n;
  let n = if Gather.active c.gather then consume_gather c n else n in
  let out_rem = c.out_len - c.out_sent in
  let k = if n < out_rem then n else out_rem in
  c.out_sent <- c.out_sent + k;
  let rest = n - k in
  if rest > 0 then begin
    c.ext_off <- c.ext_off + rest;
    c.ext_len <- c.ext_len - rest
  end

let last c =
  match c.after with
  | Then_close -> true
  | Then_next -> c.close || c.sh.draining
  | Then_body | Then_resume | Then_detach -> false

(* The body's [len] bytes now follow the head in [out]. *)
let absorbed c len =
  c.out_len <- c.out_len + len;
  c.ext_off <- c.ext_off + len;
  c.ext_len <- 0

(* The body's length when it fits behind the head in [out] within [max]
   bytes, else [0]. *)
let absorbable c ~max =
  let len = c.ext_len in
  let out_rem = c.out_len - c.out_sent in
  if len > 0 && out_rem > 0 && out_rem + len <= max && c.out_len + len <= Httpz.Bigstring.length c.out
  then len
  else 0

let absorb_body c ~max =
  let len = absorbable c ~max in
  if len > 0 then
    match c.ext with
    | Ext_string ->
        Httpz.Bigstring.blit_from_string c.ext_str ~src_off:c.ext_off c.out ~dst_off:c.out_len ~len;
        absorbed c len
    | Ext_bigstring ->
        Httpz.Bigstring.blit ~src:c.ext_bs ~src_off:c.ext_off ~dst:c.out ~dst_off:c.out_len ~len;
        absorbed c len
    | Ext_file | No_ext -> ()

let file_absorbable c ~max = if c.ext = Ext_file then absorbable c ~max else 0
let file_absorbed c n = absorbed c n

let file_slice c =
  let cap = Httpz.Bigstring.length c.out in
  if c.ext_len < cap then c.ext_len else cap

let file_sliced c n =
  c.out_sent <- 0;
  c.out_len <- n;
  c.ext_off <- c.ext_off + n;
  c.ext_len <- c.ext_len - n

module type TRANSPORT = sig
  val budget : int
  val holds_last : bool
  val head : Slot.t -> more:bool -> int
  val head_string : Slot.t -> len:int -> more:bool -> int
  val head_bigstring : Slot.t -> len:int -> more:bool -> int
  val file : Slot.t -> len:int -> int
  val gathered : Slot.t -> more:bool -> int
  val unsent : Slot.t -> int
  val send_unsent : Slot.t -> int
end

let would_block = -1
let gone = -2

(* The walk's state between writes, as ints: no tuple, no ref cell. *)
let going = 0
let done_ = 1
let full = 2
let dead = 3

module Walk (T : TRANSPORT) = struct
  let write c =
    let last = last c in
    let budget = ref (if c.ext = Ext_bigstring && not c.ext_stable then max_int else T.budget) in
    let state = ref going in
    while !state = going do
      let seg = segment c in
      if seg = Nothing then state := done_
      else if !budget <= 0 then state := full
      else begin
        let clip = if c.ext_len < !budget then c.ext_len else !budget in
        let n =
          match seg with
          | Nothing -> 0
          | Head ->
              (* A file follows: its head goes with MSG_MORE, not held. *)
              if c.ext_len > 0 then T.head c ~more:true
              else begin
                if T.holds_last then c.held <- last;
                T.head c ~more:(last || c.more_output)
              end
          | Head_string ->
              if T.holds_last then c.held <- last;
              T.head_string c ~len:clip ~more:last
          | Head_bigstring ->
              if T.holds_last then c.held <- last;
              T.head_bigstring c ~len:clip ~more:(last || c.more_output)
          | File -> T.file c ~len:clip
          | Gathered ->
              if c.ext_len > 0 then T.gathered c ~more:true
              else begin
                if T.holds_last then c.held <- last;
                T.gathered c ~more:(last || c.more_output)
              end
          | Unsent -> T.send_unsent c
        in
        c.unsent <- T.unsent c;
        if n > 0 then begin
          budget := !budget - n;
          if seg <> Unsent then advance c n
        end
        else if n = 0 then ()
        else if n = would_block then state := full
        else state := dead
      end
    done;
    if !state = done_ then Flushed else if !state = full then Blocked else Dead
end
