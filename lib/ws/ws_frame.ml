type opcode = Continuation | Text | Binary | Close | Ping | Pong

let opcode_to_int = function
  | Continuation -> 0x0 | Text -> 0x1 | Binary -> 0x2 | Close -> 0x8 | Ping -> 0x9 | Pong -> 0xA

let is_known_opcode n = n = 0 || n = 1 || n = 2 || n = 8 || n = 9 || n = 10

let opcode_of_int = function
  | 0x0 -> Continuation | 0x1 -> Text | 0x2 -> Binary | 0x8 -> Close | 0x9 -> Ping
  | 0xA -> Pong
  | _ -> invalid_arg "Httpz.Ws_frame.opcode_of_int"

let is_control = function Close | Ping | Pong -> true | Continuation | Text | Binary -> false

let opcode_to_string = function
  | Continuation -> "continuation" | Text -> "text" | Binary -> "binary" | Close -> "close"
  | Ping -> "ping" | Pong -> "pong"

let max_control_payload = 125

(* Key byte [j] (0-3) of a wire-order key. *)
let[@inline] key_byte key j = (key lsr (24 - (8 * (j land 3)))) land 0xFF

(* The key replicated over a word, laid out so that memory byte [j] of
   the word meets key byte [phase + j]: since 8 is a multiple of 4, the
   same word fits every word of the payload. Built in the loop's own
   function so the int64 stays unboxed. *)
let[@inline never] unmask buf ~off ~len ~key ~phase =
  let k0 = key_byte key phase and k1 = key_byte key (phase + 1)
  and k2 = key_byte key (phase + 2) and k3 = key_byte key (phase + 3) in
  let half =
    if Sys.big_endian then (k0 lsl 24) lor (k1 lsl 16) lor (k2 lsl 8) lor k3
    else k0 lor (k1 lsl 8) lor (k2 lsl 16) lor (k3 lsl 24)
  in
  let h = Int64.of_int half in
  let word = Int64.logor h (Int64.shift_left h 32) in
  let stop = off + len in
  let i = ref off in
  while !i + 8 <= stop do
    Bigstring.unsafe_set64 buf !i (Int64.logxor (Bigstring.unsafe_get64 buf !i) word);
    i := !i + 8
  done;
  (* Fewer than 8 bytes left, at payload index (i - off): key byte
     phase + (i - off), i.e. phase + (i - off) mod 4. *)
  while !i < stop do
    let kb = key_byte key (phase + (!i - off)) in
    Bigstring.unsafe_set buf !i
      (Char.unsafe_chr (Char.code (Bigstring.unsafe_get buf !i) lxor kb));
    incr i
  done

let header_length ~len ~masked =
  (if len < 126 then 2 else if len < 0x10000 then 4 else 10) + if masked then 4 else 0

let[@inline] set buf i v = Bigstring.unsafe_set buf i (Char.unsafe_chr (v land 0xFF))

let write_any buf ~off ~fin ~rsv1 op ~len ~masked ~key =
  if len < 0 || (is_control op && (len > max_control_payload || not fin)) then
    invalid_arg "Httpz.Ws_frame.write_header";
  let hlen = header_length ~len ~masked in
  Bigstring.check_range "Httpz.Ws_frame.write_header" buf ~off ~len:hlen;
  set buf off
    ((if fin then 0x80 else 0) lor (if rsv1 then 0x40 else 0) lor opcode_to_int op);
  let mask_bit = if masked then 0x80 else 0 in
  let p =
    if len < 126 then begin set buf (off + 1) (mask_bit lor len); off + 2 end
    else if len < 0x10000 then begin
      set buf (off + 1) (mask_bit lor 126);
      set buf (off + 2) (len lsr 8);
      set buf (off + 3) len;
      off + 4
    end
    else begin
      set buf (off + 1) (mask_bit lor 127);
      for j = 0 to 7 do set buf (off + 2 + j) (len lsr (56 - (8 * j))) done;
      off + 10
    end
  in
  if masked then begin
    for j = 0 to 3 do set buf (p + j) (key_byte key j) done;
    p + 4
  end
  else p

let write_header buf ~off ~fin ~rsv1 op ~len =
  write_any buf ~off ~fin ~rsv1 op ~len ~masked:false ~key:0

let write_masked_header buf ~off ~fin ~rsv1 op ~len ~key =
  write_any buf ~off ~fin ~rsv1 op ~len ~masked:true ~key

let write_client_frame buf ~off ~fin op ~key payload =
  let len = String.length payload in
  let p = write_masked_header buf ~off ~fin ~rsv1:false op ~len ~key in
  Bigstring.blit_from_string payload ~src_off:0 buf ~dst_off:p ~len;
  unmask buf ~off:p ~len ~key ~phase:0;
  p + len
