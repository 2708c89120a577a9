(* States are premultiplied by 16 so the transition table is indexed by
   [state + class] with no multiply; all fit in a byte. What a state
   still expects, by name: *)
let s_accept = 0
let s_reject = 16
let s_tail1 = 32  (* one continuation byte, 80-BF *)
let s_tail2 = 48  (* two *)
let s_tail3 = 64  (* three *)
let s_e0 = 80  (* after E0: A0-BF then one (no overlong 3-byte form) *)
let s_ed = 96  (* after ED: 80-9F then one (no surrogate) *)
let s_f0 = 112  (* after F0: 90-BF then two (no overlong 4-byte form) *)
let s_f4 = 128  (* after F4: 80-8F then two (nothing above U+10FFFF) *)

(* Byte classes. Continuation bytes are split three ways (80-8F, 90-9F,
   A0-BF) because E0, ED, F0 and F4 each admit only part of that range
   as their second byte; lead bytes get a class per distinct state. *)
let c_ascii = 0
let c_cont_80 = 1
let c_cont_90 = 2
let c_cont_a0 = 3
let c_lead2 = 4  (* C2-DF *)
let c_e0 = 5
let c_lead3 = 6  (* E1-EC, EE-EF *)
let c_ed = 7
let c_f0 = 8
let c_lead4 = 9  (* F1-F3 *)
let c_f4 = 10
let c_invalid = 11  (* C0, C1, F5-FF: never in UTF-8 *)

let class_of_byte b =
  if b < 0x80 then c_ascii
  else if b < 0x90 then c_cont_80
  else if b < 0xA0 then c_cont_90
  else if b < 0xC0 then c_cont_a0
  else if b < 0xC2 then c_invalid
  else if b < 0xE0 then c_lead2
  else if b = 0xE0 then c_e0
  else if b = 0xED then c_ed
  else if b < 0xF0 then c_lead3
  else if b = 0xF0 then c_f0
  else if b < 0xF4 then c_lead4
  else if b = 0xF4 then c_f4
  else c_invalid

let next_state s c =
  if s = s_accept then
    if c = c_ascii then s_accept
    else if c = c_lead2 then s_tail1
    else if c = c_e0 then s_e0
    else if c = c_lead3 then s_tail2
    else if c = c_ed then s_ed
    else if c = c_f0 then s_f0
    else if c = c_lead4 then s_tail3
    else if c = c_f4 then s_f4
    else s_reject
  else
    let cont = c = c_cont_80 || c = c_cont_90 || c = c_cont_a0 in
    if not cont then s_reject
    else if s = s_tail1 then s_accept
    else if s = s_tail2 then s_tail1
    else if s = s_tail3 then s_tail2
    else if s = s_e0 then (if c = c_cont_a0 then s_tail1 else s_reject)
    else if s = s_ed then (if c <> c_cont_a0 then s_tail1 else s_reject)
    else if s = s_f0 then (if c <> c_cont_80 then s_tail2 else s_reject)
    else if s = s_f4 then (if c = c_cont_80 then s_tail2 else s_reject)
    else s_reject

let classes = String.init 256 (fun b -> Char.unsafe_chr (class_of_byte b))

let transitions =
  String.init (s_f4 + 16) (fun i ->
      let s = i land lnot 15 and c = i land 15 in
      Char.unsafe_chr (if c > c_invalid then s_reject else next_state s c))

let accept = s_accept
let reject = s_reject
let is_complete s = s = s_accept
let is_rejected s = s = s_reject

let[@inline] step s ch =
  Char.code
    (String.unsafe_get transitions (s + Char.code (String.unsafe_get classes (Char.code ch))))

(* [feed] is a leaf loop: kept out of line, its induction variable stays
   in a register (see swar.ml). *)
let[@inline never] feed s buf ~off ~len =
  let stop = off + len in
  let i = ref off and st = ref s in
  while !i < stop && !st <> s_reject do
    if !st = s_accept && !i + 8 <= stop
       && (Int64.logand (Bigstring.unsafe_get64 buf !i) 0x8080808080808080L : int64) = 0L
    then i := !i + 8
    else begin
      st := step !st (Bigstring.unsafe_get buf !i);
      incr i
    end
  done;
  !st

let first_invalid s buf ~off ~len =
  let stop = off + len in
  let i = ref off and st = ref s in
  while !i < stop && !st <> s_reject do
    st := step !st (Bigstring.unsafe_get buf !i);
    incr i
  done;
  if !st = s_reject && s <> s_reject then !i - 1 else -1

