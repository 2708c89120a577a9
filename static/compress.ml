module B = Httpz.Bigstring

let put32le (b : Bytes.t) off (v : int32) =
  let v = Int32.to_int v land 0xffff_ffff in
  for i = 0 to 3 do Bytes.set b (off + i) (Char.unsafe_chr ((v lsr (8 * i)) land 0xff)) done

let gzip ~level (src : B.t) ~off ~len =
  if level < 1 || level > 9 then invalid_arg "Compress.gzip: level";
  let input = Bytes.create len in
  for i = 0 to len - 1 do Bytes.unsafe_set input i (B.unsafe_get src (off + i)) done;
  (* deflateBound for a raw stream is below this; the loop grows the
     buffer anyway if zlib ever wants more. *)
  let cap = ref (len + (len lsr 8) + 64) in
  let out = ref (Bytes.create (10 + !cap + 8)) in
  let z = Zlib.deflate_init level false in
  let ipos = ref 0 and opos = ref 10 and finished = ref false in
  Fun.protect
    ~finally:(fun () -> Zlib.deflate_end z)
    (fun () ->
      while not !finished do
        let avail = Bytes.length !out - 8 - !opos in
        if avail < 64 then begin
          let bigger = Bytes.create (2 * Bytes.length !out) in
          Bytes.blit !out 0 bigger 0 !opos;
          out := bigger
        end;
        let avail = Bytes.length !out - 8 - !opos in
        let fin, used_in, used_out =
          Zlib.deflate z input !ipos (len - !ipos) !out !opos avail Zlib.Z_FINISH
        in
        ipos := !ipos + used_in;
        opos := !opos + used_out;
        finished := fin
      done);
  let o = !out in
  (* ID1 ID2 CM=deflate FLG=0 MTIME=0 XFL OS=unix *)
  Bytes.blit_string "\x1f\x8b\x08\x00\x00\x00\x00\x00" 0 o 0 8;
  Bytes.set o 8 (if level = 9 then '\x02' else if level = 1 then '\x04' else '\x00');
  Bytes.set o 9 '\x03';
  put32le o !opos (Zlib.update_crc 0l input 0 len);
  put32le o (!opos + 4) (Int32.of_int (len land 0xffff_ffff));
  let n = !opos + 8 in
  let r = B.create n in
  B.blit_from_string (Bytes.unsafe_to_string o) ~src_off:0 r ~dst_off:0 ~len:n;
  r
