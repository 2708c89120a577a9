(* Feeding a reader slices of input and recording what it reports, and
   building frames (valid or not) as strings. *)

open Httpz
module S = Httpz_test_support
module R = Ws_reader

type event =
  | Msg of string * string  (* "text" / "binary", the whole payload *)
  | Ctl of string * string  (* "ping" / "pong", payload *)
  | Close of int * string  (* code, reason *)
  | Err of string * int * int  (* error, close code, absolute offset of the deciding byte *)
  | Partial of string  (* data of a message still open at the end *)

let event_to_string = function
  | Msg (op, p) -> Printf.sprintf "%s %S" op p
  | Ctl (op, p) -> Printf.sprintf "%s %S" op p
  | Close (c, r) -> Printf.sprintf "close %d %S" c r
  | Err (e, c, at) -> Printf.sprintf "error %s (%d) at %d" e c at
  | Partial p -> Printf.sprintf "partial %S" p

let events_t =
  Alcotest.testable
    (fun ppf l -> Format.pp_print_string ppf ("[" ^ String.concat "; " (List.map event_to_string l) ^ "]"))
    ( = )

let fail fmt = Printf.ksprintf failwith fmt

(* Feeds [slices] in order, each in a buffer of its own at offset [off]
   with garbage around it, and checks the per-call contract. *)
let feed ?(off = 7) ?(role = R.Server) ?(deflate = false) ?max_message slices =
  let r = R.create ~role ~deflate ?max_message () in
  let events = ref [] and msg = Buffer.create 64 and base = ref 0 and stopped = ref false in
  let emit e = events := e :: !events in
  List.iter
    (fun s ->
      if not !stopped then begin
        let buf = S.bigstring_at ~off s in
        let stop = off + String.length s in
        let pos = ref off and go = ref true in
        while !go do
          let len = stop - !pos in
          let st = R.read r buf ~off:!pos ~len in
          let c = R.consumed r in
          if c < 0 || c > len then fail "consumed %d of %d" c len;
          match st with
          | Data ->
              let d_off = R.data_off r and d_len = R.data_len r in
              if d_len <= 0 then fail "empty Data";
              if d_off < !pos || d_off + d_len <> !pos + c then fail "Data span outside the consumed bytes";
              Buffer.add_string msg (Bigstring.sub_string buf ~off:d_off ~len:d_len);
              if R.message_bytes r <> Buffer.length msg then fail "message_bytes";
              pos := !pos + c
          | Message_end ->
              emit (Msg (Ws_frame.opcode_to_string (R.message_opcode r), Buffer.contents msg));
              Buffer.clear msg;
              pos := !pos + c
          | Control ->
              let payload = Bigstring.sub_string (R.control_buffer r) ~off:0 ~len:(R.control_length r) in
              (match R.control_opcode r with
               | Close ->
                   let rl = R.close_reason_length r in
                   emit (Close (R.close_code r, if rl = 0 then "" else String.sub payload 2 rl))
               | op -> emit (Ctl (Ws_frame.opcode_to_string op, payload)));
              pos := !pos + c
          | Need_more ->
              if c <> len then fail "Need_more consumed %d of %d" c len;
              go := false
          | Closed -> if c <> 0 then fail "Closed consumed"; go := false; stopped := true
          | Error ->
              let e = R.error r in
              emit (Err (R.error_to_string e, R.error_close_code e, !base + (!pos - off) + c));
              if R.read r buf ~off:!pos ~len <> Error then fail "Error is not sticky";
              go := false;
              stopped := true
        done;
        base := !base + String.length s
      end)
    slices;
  if Buffer.length msg > 0 && not !stopped then emit (Partial (Buffer.contents msg));
  List.rev !events

let bytes_of s = List.init (String.length s) (fun i -> String.make 1 s.[i])

(* ---------- building frames ---------- *)

let key = 0x37fa213d

(* A well-formed frame: masked (client) unless [~masked:false]. *)
let frame ?(fin = true) ?(masked = true) ?(k = key) ?(rsv1 = false) op payload =
  let len = String.length payload in
  let b = Bigstring.create (14 + len) in
  let p =
    if masked then Ws_frame.write_masked_header b ~off:0 ~fin ~rsv1 op ~len ~key:k
    else Ws_frame.write_header b ~off:0 ~fin ~rsv1 op ~len
  in
  Bigstring.blit_from_string payload ~src_off:0 b ~dst_off:p ~len;
  if masked then Ws_frame.unmask b ~off:p ~len ~key:k ~phase:0;
  Bigstring.sub_string b ~off:0 ~len:(p + len)

(* Any header bytes: first byte [b0], length byte [l7] (default the
   payload's length), [ext] extended length bytes, then the key and the
   masked payload unless [~masked:false]. *)
let raw ?(masked = true) ?l7 ?(ext = "") b0 payload =
  let len = String.length payload in
  let l7 = match l7 with Some l -> l | None -> len in
  let masked_payload =
    if not masked then payload
    else begin
      let b = Bigstring.of_string payload in
      Ws_frame.unmask b ~off:0 ~len ~key ~phase:0;
      Bigstring.to_string b
    end
  in
  let k = if masked then "\x37\xfa\x21\x3d" else "" in
  String.make 1 (Char.chr b0) ^ String.make 1 (Char.chr ((if masked then 0x80 else 0) lor l7))
  ^ ext ^ k ^ masked_payload

let be16 n = String.init 2 (fun i -> Char.chr ((n lsr (8 * (1 - i))) land 0xFF))
let be64 n = String.init 8 (fun i -> Char.chr ((n lsr (8 * (7 - i))) land 0xFF))

(* ---------- a slow reference UTF-8 decoder ---------- *)

type decoded = Valid | Truncated of int (* start of the unfinished sequence *) | Invalid

(* Decodes code points the obvious way (RFC 3629 §3), then refuses
   overlongs, surrogates and values above U+10FFFF by arithmetic. *)
let decode s =
  let n = String.length s in
  let rec go i =
    if i >= n then Valid
    else begin
      let b = Char.code s.[i] in
      let len, init =
        if b < 0x80 then 1, b
        else if b >= 0xC0 && b < 0xE0 then 2, b land 0x1F
        else if b >= 0xE0 && b < 0xF0 then 3, b land 0x0F
        else if b >= 0xF0 && b < 0xF8 then 4, b land 0x07
        else 0, 0
      in
      if len = 0 then Invalid
      else begin
        let avail = min len (n - i) in
        let cont = ref true and cp = ref init in
        for j = 1 to avail - 1 do
          let c = Char.code s.[i + j] in
          if c land 0xC0 <> 0x80 then cont := false;
          cp := (!cp lsl 6) lor (c land 0x3F)
        done;
        if not !cont then Invalid
        else if avail < len then Truncated i
        else begin
          let cp = !cp in
          let min_cp = match len with 1 -> 0 | 2 -> 0x80 | 3 -> 0x800 | _ -> 0x10000 in
          if cp < min_cp || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF then Invalid
          else go (i + len)
        end
      end
    end
  in
  go 0

(* Can the prefix [s] be completed into valid UTF-8? Try every way of
   finishing its last sequence with one byte of each continuation range. *)
let is_valid_prefix s =
  match decode s with
  | Valid -> true
  | Invalid -> false
  | Truncated i ->
      let reps = [ "\x80"; "\x8f"; "\x90"; "\x9f"; "\xa0"; "\xbf" ] in
      let tail = String.sub s i (String.length s - i) in
      let rec complete t k =
        decode t = Valid || (k > 0 && List.exists (fun r -> complete (t ^ r) (k - 1)) reps)
      in
      complete tail 3

(* The index of the first byte after which no completion is valid, or -1. *)
let reference_first_invalid s =
  let n = String.length s in
  let rec go k = if k >= n then -1 else if is_valid_prefix (String.sub s 0 (k + 1)) then go (k + 1) else k in
  go 0
