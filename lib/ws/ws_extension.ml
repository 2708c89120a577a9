type t = {
  mutable accepted : bool;
  mutable snct : bool;
  mutable cnct : bool;
  mutable smwb : int;  (** -1: not stated *)
  mutable cmwb : int;  (** -1: not stated; 0: stated without a value *)
  (* the offer being read *)
  mutable o_ok : bool;
  mutable o_snct : bool;
  mutable o_cnct : bool;
  mutable o_smwb : int;
  mutable o_cmwb : int;
  mutable offered : bool;
}

type result = Accepted | Not_offered | Declined | Malformed

let create () =
  { accepted = false; snct = false; cnct = false; smwb = -1; cmwb = -1; o_ok = false;
    o_snct = false; o_cnct = false; o_smwb = -1; o_cmwb = -1; offered = false }

let accepted t = t.accepted
let server_no_context_takeover t = t.snct
let client_no_context_takeover t = t.cnct
let forgo_server_context t = if t.accepted then t.snct <- true
let server_max_window_bits t = if t.smwb > 0 then t.smwb else 15
let client_max_window_bits t = if t.cmwb > 0 then t.cmwb else 15

let[@inline] get buf i = Bigstring.unsafe_get buf i

let skip_ows buf i stop =
  let i = ref i in
  while !i < stop && Charset.is_ows (get buf !i) do incr i done;
  !i

let skip_tchars buf i stop =
  let i = ref i in
  while !i < stop && Charset.is_tchar (get buf !i) do incr i done;
  !i

(* A parameter value, as [no_value], [bad_value] or 8-15. *)
let no_value = -2
let bad_value = -1

let window_bits buf off len =
  if len = 1 && (get buf off = '8' || get buf off = '9') then Char.code (get buf off) - 48
  else if len = 2 && get buf off = '1' && get buf (off + 1) >= '0' && get buf (off + 1) <= '5'
  then 10 + Char.code (get buf (off + 1)) - 48
  else bad_value

let apply t buf ~off ~len v =
  if Bigstring.equal_caseless buf ~off ~len "server_no_context_takeover" then begin
    if v <> no_value || t.o_snct then t.o_ok <- false;
    t.o_snct <- true
  end
  else if Bigstring.equal_caseless buf ~off ~len "client_no_context_takeover" then begin
    if v <> no_value || t.o_cnct then t.o_ok <- false;
    t.o_cnct <- true
  end
  else if Bigstring.equal_caseless buf ~off ~len "server_max_window_bits" then begin
    if v < 0 || t.o_smwb <> -1 then t.o_ok <- false;
    t.o_smwb <- v
  end
  else if Bigstring.equal_caseless buf ~off ~len "client_max_window_bits" then begin
    if v = bad_value || t.o_cmwb <> -1 then t.o_ok <- false;
    t.o_cmwb <- (if v = no_value then 0 else v)
  end
  else t.o_ok <- false

(* The offers of one field value in [off, stop): [-1] when malformed. *)
let parse_line t buf off stop =
  let i = ref off and bad = ref false in
  while (not !bad) && !i < stop do
    while !i < stop && (Charset.is_ows (get buf !i) || get buf !i = ',') do incr i done;
    if !i < stop then begin
      let name_end = skip_tchars buf !i stop in
      if name_end = !i then bad := true
      else begin
        let pmd = Bigstring.equal_caseless buf ~off:!i ~len:(name_end - !i) "permessage-deflate" in
        t.o_ok <- true; t.o_snct <- false; t.o_cnct <- false; t.o_smwb <- -1; t.o_cmwb <- -1;
        i := skip_ows buf name_end stop;
        while (not !bad) && !i < stop && get buf !i = ';' do
          let p = skip_ows buf (!i + 1) stop in
          let q = skip_tchars buf p stop in
          if q = p then bad := true
          else begin
            i := skip_ows buf q stop;
            let v = ref no_value in
            if !i < stop && get buf !i = '=' then begin
              let s = skip_ows buf (!i + 1) stop in
              if s < stop && get buf s = '"' then begin
                (* quoted-string: the digits inside are the value; an
                   escape cannot make one, so it makes a bad value *)
                let e = ref (s + 1) and escaped = ref false in
                while !e < stop && get buf !e <> '"' do
                  if get buf !e = '\\' then begin escaped := true; incr e end;
                  incr e
                done;
                if !e >= stop then bad := true
                else begin
                  v := (if !escaped then bad_value else window_bits buf (s + 1) (!e - s - 1));
                  i := skip_ows buf (!e + 1) stop
                end
              end
              else begin
                let e = skip_tchars buf s stop in
                if e = s then bad := true
                else begin v := window_bits buf s (e - s); i := skip_ows buf e stop end
              end
            end;
            if pmd && not !bad then apply t buf ~off:p ~len:(q - p) !v
          end
        done;
        if !i < stop && get buf !i <> ',' then bad := true;
        if pmd && not !bad then begin
          t.offered <- true;
          if t.o_ok && not t.accepted then begin
            t.accepted <- true; t.snct <- t.o_snct; t.cnct <- t.o_cnct; t.smwb <- t.o_smwb;
            t.cmwb <- t.o_cmwb
          end
        end
      end
    end
  done;
  if !bad then -1 else 0

let reset t =
  t.accepted <- false; t.snct <- false; t.cnct <- false; t.smwb <- -1; t.cmwb <- -1;
  t.offered <- false

let field_name = "sec-websocket-extensions"

let negotiate t req buf =
  reset t;
  let i = ref (Ws_handshake.find_field req buf field_name ~after:(-1)) and bad = ref false in
  while (not !bad) && !i >= 0 do
    let v = Request.header_value req !i in
    if parse_line t buf (Span.off v) (Span.off v + Span.len v) < 0 then bad := true
    else i := Ws_handshake.find_field req buf field_name ~after:!i
  done;
  if !bad then begin reset t; Malformed end
  else if t.accepted then Accepted
  else if t.offered then Declined
  else Not_offered

let put buf p s =
  Bigstring.unsafe_blit_from_string s ~src_off:0 buf ~dst_off:p ~len:(String.length s);
  p + String.length s

let put_bits buf p n =
  if n >= 10 then begin
    Bigstring.unsafe_set buf p '1';
    Bigstring.unsafe_set buf (p + 1) (Char.unsafe_chr (48 + n - 10));
    p + 2
  end
  else begin Bigstring.unsafe_set buf p (Char.unsafe_chr (48 + n)); p + 1 end

let field_start = "Sec-WebSocket-Extensions: permessage-deflate"
let snct_param = "; server_no_context_takeover"
let cnct_param = "; client_no_context_takeover"
let smwb_param = "; server_max_window_bits="
let cmwb_param = "; client_max_window_bits="

let field_length t =
  let bits n = if n >= 10 then 2 else 1 in
  String.length field_start
  + (if t.snct then String.length snct_param else 0)
  + (if t.cnct then String.length cnct_param else 0)
  + (if t.smwb > 0 then String.length smwb_param + bits t.smwb else 0)
  + (if t.cmwb > 0 then String.length cmwb_param + bits t.cmwb else 0)
  + 2

let write_response_field t buf ~off =
  if not t.accepted then off
  else begin
    Bigstring.check_range "Httpz.Ws_extension.write_response_field" buf ~off ~len:(field_length t);
    let p = ref (put buf off field_start) in
    if t.snct then p := put buf !p snct_param;
    if t.cnct then p := put buf !p cnct_param;
    if t.smwb > 0 then begin p := put buf !p smwb_param; p := put_bits buf !p t.smwb end;
    if t.cmwb > 0 then begin p := put buf !p cmwb_param; p := put_bits buf !p t.cmwb end;
    put buf !p "\r\n"
  end
