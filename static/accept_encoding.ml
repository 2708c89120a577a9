open Httpz
module B = Bigstring

let[@inline] lower c = if c >= 'A' && c <= 'Z' then Char.unsafe_chr (Char.code c + 32) else c

(* {1 Accept-Encoding (RFC 9110 §12.5.3)}

     Accept-Encoding  = #( codings [ weight ] )
     codings          = content-coding / "identity" / "*"
     weight           = OWS ";" OWS "q=" qvalue
     qvalue           = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )

   Weights are kept in thousandths. The scanner writes the highest weight
   seen for gzip (x-gzip is the same coding, §8.4.1.3) and for "*" into
   [w], [-1] when not listed; an element that does not parse is skipped
   whole (no guess at what the client meant). *)

type weights = { mutable gzip : int; mutable star : int }

let scan_accept_encoding w (buf : B.t) ~off ~len =
  let stop = off + len in
  let i = ref off in
  while !i < stop do
    while !i < stop && (let c = B.unsafe_get buf !i in Charset.is_ows c || c = ',') do incr i done;
    if !i < stop then begin
      let s = !i in
      while !i < stop && Charset.is_tchar (B.unsafe_get buf !i) do incr i done;
      let tlen = !i - s in
      let q = ref (if tlen = 0 then -1 else 1000) in
      while !i < stop && Charset.is_ows (B.unsafe_get buf !i) do incr i done;
      while !q >= 0 && !i < stop && B.unsafe_get buf !i = ';' do
        incr i;
        while !i < stop && Charset.is_ows (B.unsafe_get buf !i) do incr i done;
        let ps = !i in
        while !i < stop && Charset.is_tchar (B.unsafe_get buf !i) do incr i done;
        let plen = !i - ps in
        if plen = 1 && lower (B.unsafe_get buf ps) = 'q'
           && !i < stop && B.unsafe_get buf !i = '=' then begin
          incr i;
          if !i < stop && (B.unsafe_get buf !i = '0' || B.unsafe_get buf !i = '1') then begin
            let one = B.unsafe_get buf !i = '1' in
            incr i;
            let v = ref (if one then 1000 else 0) in
            if !i < stop && B.unsafe_get buf !i = '.' then begin
              incr i;
              let digits = ref 0 and scale = ref 100 in
              while !i < stop && !digits <= 3
                    && (let c = B.unsafe_get buf !i in c >= '0' && c <= '9') do
                v := !v + (Char.code (B.unsafe_get buf !i) - 48) * !scale;
                scale := !scale / 10; incr digits; incr i
              done;
              if !digits > 3 then v := -1
            end;
            q := if !v > 1000 then -1 else !v
          end
          else q := -1
        end
        else if plen > 0 then
          (* A parameter the grammar does not have: tolerated, skipped. *)
          while !i < stop && (let c = B.unsafe_get buf !i in c <> ';' && c <> ',') do incr i done
        else q := -1;
        while !i < stop && Charset.is_ows (B.unsafe_get buf !i) do incr i done
      done;
      if !i < stop && B.unsafe_get buf !i <> ',' then begin
        q := -1;
        while !i < stop && B.unsafe_get buf !i <> ',' do incr i done
      end;
      if !q >= 0 then begin
        if (tlen = 4 && B.equal_caseless buf ~off:s ~len:4 "gzip")
           || (tlen = 6 && B.equal_caseless buf ~off:s ~len:6 "x-gzip")
        then (if !q > w.gzip then w.gzip <- !q)
        else if tlen = 1 && B.unsafe_get buf s = '*' then (if !q > w.star then w.star <- !q)
      end
    end
  done

let[@inline] weights_accept_gzip w = w.gzip > 0 || (w.gzip < 0 && w.star > 0)

let accepts_gzip_w w (buf : B.t) req =
  w.gzip <- -1;
  w.star <- -1;
  let i = ref (Request.find req Accept_encoding) in
  while !i >= 0 do
    let v = Request.header_value req !i in
    scan_accept_encoding w buf ~off:(Span.off v) ~len:(Span.len v);
    i := Request.find_next req Accept_encoding ~after:!i
  done;
  weights_accept_gzip w

(* Module-level scratch: the event loop is single-threaded (OCaml 4.13,
   one loop per process), so one record serves every caller. *)
let global_weights = { gzip = -1; star = -1 }
let accepts_gzip buf req = accepts_gzip_w global_weights buf req

let accepts_gzip_value v =
  let w = { gzip = -1; star = -1 } in
  scan_accept_encoding w (B.of_string v) ~off:0 ~len:(String.length v);
  weights_accept_gzip w

