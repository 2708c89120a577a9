(* The request parser has two paths: [Request.create ~simd:true] sends
   well-formed field lines, request-targets and Host names through the C
   kernel (lib/core/simd_stubs.c), [~simd:false] keeps every byte in the
   portable OCaml scanners. Both must give the same answer on every input:
   status, error, every span and every fact. Here they meet the conformance
   vectors and a fuzz corpus whole, cut at every length, fed byte by byte,
   at every alignment against the buffer's end (where the kernel's last
   window is read backwards from the end), under tight limits; and the
   kernel's scanners meet their OCaml references on every byte in every
   lane of a window. *)

open Httpz
module R = Request
module S = Httpz_test_support

let sprintf = Printf.sprintf

(* {1 Everything a parse lets a caller see, as one string} *)

let observe t st b =
  let span s = sprintf "%d+%d" (Span.off s) (Span.len s) in
  match st with
  | R.Partial -> "partial"
  | R.Error -> "error " ^ Parse_error.to_string (R.error t)
  | R.Complete ->
      let fields =
        List.init (R.header_count t) (fun i ->
            sprintf "%s %s=%s" (Header_name.to_string (R.header_name t i))
              (span (R.header_name_span t i)) (span (R.header_value t i)))
      in
      ignore b;
      sprintf "complete meth=%s %s target=%s version=%s head=%d cl=%d chunked=%b keep_alive=%b expect=%b host=%s has_host=%b upgrade=%b fields=[%s]"
        (Meth.to_string (R.meth t)) (span (R.meth_span t)) (span (R.target t))
        (Version.to_string (R.version t)) (R.head_length t) (R.content_length t) (R.is_chunked t)
        (R.keep_alive t) (R.expect_continue t) (span (R.host t)) (R.has_host t) (R.has_upgrade t)
        (String.concat "; " fields)

(* Disagreements are collected, then reported together (the first few in
   full), so that one run shows how widespread a bug is. *)
type report = { mutable checked : int; mutable bad : string list; mutable nbad : int }

let new_report () = { checked = 0; bad = []; nbad = 0 }

let agree r where ~kernel ~portable =
  r.checked <- r.checked + 1;
  if kernel <> portable then begin
    r.nbad <- r.nbad + 1;
    if r.nbad <= 5 then
      r.bad <- sprintf "%s:\n  kernel:   %s\n  portable: %s" where kernel portable :: r.bad
  end

let finish r =
  if r.nbad > 0 then
    Alcotest.failf "%d of %d comparisons disagree; the first:\n%s" r.nbad r.checked
      (String.concat "\n" (List.rev r.bad));
  if r.checked = 0 then Alcotest.fail "nothing was compared"

(* {1 One input, every way of parsing it} *)

let tight = { R.default_limits with max_headers = 3; max_head = 96; max_target = 16 }

(* [input] at [off] in a buffer that ends exactly where the input ends
   ([pad] = 0) or [pad] garbage bytes later. *)
let buffer ~off ~pad input =
  let n = String.length input in
  let b = Bigstring.create (off + n + pad) in
  Bigarray.Array1.fill b '\r';
  Bigstring.blit_from_string input ~src_off:0 b ~dst_off:off ~len:n;
  b

(* The kernel may leave any line to the portable loop and still give the
   same answers, only slower; so, besides the answers, it must take every
   line of a head the portable path accepts: called where the first field
   starts, with the head's end as its stop, it records all of them, with
   the portable path's spans, and stops at the empty line. *)
let takes_all_lines r where p b =
  let n = R.header_count p and len = R.head_length p in
  (* Under 16 bytes the kernel takes nothing, by design. *)
  if n > 0 && len >= 16 then begin
    let first = Span.off (R.header_name_span p 0) in
    let names = Array.make n 0 and values = Array.make n 0 in
    let got = Simd.field_lines b first len names values 0 n in
    let want = n lsl 32 lor (len - 2) in
    let spans ns vs =
      String.concat " "
        (List.init n (fun i -> sprintf "%d+%d=%d+%d" (Span.off ns.(i)) (Span.len ns.(i))
                                  (Span.off vs.(i)) (Span.len vs.(i))))
    in
    let portable_spans =
      spans (Array.init n (fun i -> R.header_name_span p i)) (Array.init n (fun i -> R.header_value p i))
    in
    let kernel_spans = spans (Array.map Span.unsafe_of_int names) (Array.map Span.unsafe_of_int values) in
    agree r (where ^ ", the kernel alone")
      ~kernel:(sprintf "%d lines, stops at %d: %s" (got lsr 32) (got land 0xFFFF_FFFF)
                 (if got = want then kernel_spans else ""))
      ~portable:(sprintf "%d lines, stops at %d: %s" n (len - 2) portable_spans)
  end

let both r where ?(limits = R.default_limits) b ~off ~len =
  let k = R.create ~limits ~simd:true () and p = R.create ~limits ~simd:false () in
  let sk = R.parse k b ~off ~len and sp = R.parse p b ~off ~len in
  agree r where ~kernel:(observe k sk b) ~portable:(observe p sp b);
  if sp = R.Complete && off = 0 then takes_all_lines r where p b

let whole r where input =
  let len = String.length input in
  List.iter
    (fun (off, pad) ->
      let b = buffer ~off ~pad input in
      both r (sprintf "%s at %d, %d after" where off pad) b ~off ~len;
      both r (sprintf "%s at %d, %d after, tight limits" where off pad) ~limits:tight b ~off ~len)
    [ (0, 0); (1, 0); (7, 0); (15, 0); (16, 0); (17, 0); (0, 64); (3, 13) ]

(* Every prefix, parsed afresh, in a buffer that ends where the prefix
   does: each cut lands somewhere in a window. *)
let prefixes r where input =
  for len = 0 to String.length input do
    let cut = String.sub input 0 len in
    both r (sprintf "%s cut at %d" where len) (buffer ~off:0 ~pad:0 cut) ~off:0 ~len
  done

(* One state per path, the input growing one byte per call. *)
let bytewise r where input =
  let b = buffer ~off:2 ~pad:0 input in
  let k = R.create ~simd:true () and p = R.create ~simd:false () in
  let rec go len =
    if len <= String.length input then begin
      let sk = R.parse k b ~off:2 ~len and sp = R.parse p b ~off:2 ~len in
      agree r (sprintf "%s byte by byte, %d bytes" where len) ~kernel:(observe k sk b)
        ~portable:(observe p sp b);
      if sk = R.Partial then go (len + 1)
    end
  in
  go 0

(* {1 The inputs} *)

let vector_inputs () =
  let dir = Filename.concat (S.vectors_dir ()) "request" in
  Sys.readdir dir |> Array.to_list
  |> List.filter (fun f -> Filename.check_suffix f ".http")
  |> List.sort compare
  |> List.map (fun f -> (f, S.read_file (Filename.concat dir f)))

let fuzz_seed = 0x51d
let fuzz_count = 5_000

let fuzz_input i = (Httpz_fuzz.Gen.case ~seed:fuzz_seed ~index:i).input

let all_ways r (name, input) =
  whole r name input;
  prefixes r name input;
  bytewise r name input

let test_vectors () =
  let r = new_report () in
  let vs = vector_inputs () in
  if List.length vs < 100 then Alcotest.failf "only %d vectors found" (List.length vs);
  List.iter (all_ways r) vs;
  finish r

let bench_corpus = [ "small.http"; "medium.http"; "large.http"; "headers50.http" ]

let test_corpus () =
  let r = new_report () in
  List.iter (fun f -> all_ways r (f, S.read_file (Filename.concat (S.corpus_dir ()) f))) bench_corpus;
  finish r

let test_fuzz () =
  let r = new_report () in
  for i = 0 to fuzz_count - 1 do
    let input = fuzz_input i in
    let where = sprintf "fuzz seed %d index %d" fuzz_seed i in
    if i < 500 then all_ways r (where, input) else whole r where input
  done;
  finish r

(* Field lines of lengths around the window size (16) and twice it, each
   byte of a name and a value replaced by other byte values. *)
let test_lines () =
  let r = new_report () in
  List.iter (fun nlen ->
    List.iter (fun vlen ->
      let name = String.init nlen (fun i -> "X-Abcdefghij-klmnopqrstu".[i]) in
      let value = String.init vlen (fun i -> "value with spaces, 0123456789;q=0.5/x".[i]) in
      let line = name ^ ": " ^ value in
      let input = "GET / HTTP/1.1\r\nHost: a\r\n" ^ line ^ "\r\n" ^ line ^ "\r\n\r\n" in
      let at = String.length "GET / HTTP/1.1\r\nHost: a\r\n" in
      for pos = 0 to String.length line - 1 do
        List.iter
          (fun c ->
            let input = Bytes.of_string input in
            Bytes.set input (at + pos) (Char.chr c);
            let input = Bytes.to_string input in
            let b = buffer ~off:0 ~pad:0 input in
            both r (sprintf "line %S, byte %02x at %d" line c pos) b ~off:0 ~len:(String.length input))
          (if pos mod 3 = 0 then List.init 256 Fun.id else [ 0x00; 0x09; 0x0a; 0x0d; 0x20; 0x2c; 0x3a; 0x5f; 0x7e; 0x7f; 0x80; 0xff ])
      done)
      [ 0; 1; 2; 7; 8; 13; 14; 15; 16; 17; 18; 29; 30; 31; 32; 33; 34; 36 ])
    [ 1; 2; 7; 8; 13; 14; 15; 16; 17; 18; 20 ];
  finish r

(* {1 The kernel's scanners against their OCaml references} *)

(* Every byte value at every position of a run of [len] ordinary bytes,
   the run at every offset from the start and every distance from the end
   of an exact-size buffer (so windows read forwards, backwards from the
   end, and byte by byte in buffers under 16 bytes). *)
let scanner r name ~kernel ~portable ~filler =
  for size = 1 to 40 do
    for pos = 0 to size - 1 do
      for c = 0 to 255 do
        let s = Bytes.make size filler in
        Bytes.set s pos (Char.chr c);
        let b = Bigstring.of_string (Bytes.to_string s) in
        List.iter
          (fun (from, stop) ->
            if from <= stop then
              agree r
                (sprintf "%s: byte %02x at %d of %d, scan [%d, %d)" name c pos size from stop)
                ~kernel:(string_of_int (kernel b from stop))
                ~portable:(string_of_int (portable b from stop)))
          [ (0, size); (pos, size); (0, pos); (max 0 (pos - 3), size); (size, size);
            (0, max 0 (size - 1)) ]
      done
    done
  done

let test_scanners () =
  let r = new_report () in
  scanner r "target_end" ~kernel:Simd.target_end ~portable:Swar.skip_target ~filler:'a';
  scanner r "hostname_end" ~kernel:Simd.hostname_end ~portable:Swar.skip_hostname ~filler:'b';
  finish r

(* {1 The kernel is there, and allocates nothing} *)

let machine () =
  let ic = Unix.open_process_in "uname -m" in
  let m = try input_line ic with End_of_file -> "" in
  ignore (Unix.close_process_in ic);
  m

(* Where the kernel is built (x86-64), a parser made with the defaults uses
   it: otherwise the comparisons above would compare the OCaml path with
   itself and pass however broken the kernel were. *)
let test_in_use () =
  if machine () = "x86_64" then begin
    Alcotest.(check bool) "Simd.available on x86-64" true Simd.available;
    Alcotest.(check bool) "Request.create () uses the kernel" true (R.simd (R.create ()))
  end;
  Alcotest.(check bool) "~simd:false is honoured" false (R.simd (R.create ~simd:false ()))

let alloc_cases () =
  List.concat_map
    (fun f ->
      let input = S.read_file (Filename.concat (S.corpus_dir ()) f) in
      let len = String.length input in
      (* The head ends at the buffer's end: the last windows read backwards. *)
      let b = buffer ~off:0 ~pad:0 input in
      List.map
        (fun simd ->
          let t = R.create ~simd () in
          S.zero_alloc (sprintf "parse %s, simd %b" f simd) (fun () ->
              match R.parse t b ~off:0 ~len with
              | R.Complete -> ()
              | _ -> Alcotest.failf "%s does not parse" f))
        [ true; false ])
    bench_corpus
  @
  let b = Bigstring.of_string "GET /index.html HTTP/1.1\r\nHost: www.example.com\r\n\r\n" in
  let names = Array.make 4 0 and values = Array.make 4 0 in
  [ S.zero_alloc "Simd.field_lines" (fun () ->
        ignore (Simd.field_lines b 26 (Bigstring.length b) names values 0 4 : int));
    S.zero_alloc "Simd.target_end" (fun () -> ignore (Simd.target_end b 4 (Bigstring.length b) : int));
    S.zero_alloc "Simd.hostname_end" (fun () ->
        ignore (Simd.hostname_end b 32 (Bigstring.length b) : int)) ]

(* The field-line loop exists twice (16-byte SSE2 windows, 32-byte AVX2
   windows where the CPU has AVX2): every comparison runs under each. *)
let cpu_has_avx2 =
  lazy
    (let ic = open_in "/proc/cpuinfo" in
     let rec go () =
       match input_line ic with
       | line -> S.find_sub (line ^ " ") " avx2 " >= 0 || go ()
       | exception End_of_file -> false
     in
     Fun.protect ~finally:(fun () -> close_in ic) go)

let cpu_has_avx2 () = Lazy.force cpu_has_avx2

let test_levels () =
  if Simd.available then begin
    Alcotest.(check int) "cap 1: SSE2" 1 (Simd.cap 1);
    Alcotest.(check int) "cap 2: AVX2 where the CPU has it" (if cpu_has_avx2 () then 2 else 1) (Simd.cap 2)
  end
  else Alcotest.(check int) "no kernel" 0 (Simd.cap 2)

let at_level level f () =
  let got = Simd.cap level in
  Fun.protect ~finally:(fun () -> ignore (Simd.cap 2 : int)) (fun () ->
      if Simd.available && got <> min level (if cpu_has_avx2 () then 2 else 1) then
        Alcotest.failf "Simd.cap %d gave level %d" level got;
      f ())

let agreement level =
  let name = if level = 1 then "SSE2 windows" else "AVX2 windows where the CPU has them" in
  let case n f = Alcotest.test_case n `Quick (at_level level f) in
  ( "kernel (" ^ name ^ ") and portable paths agree",
    [ case "conformance vectors" test_vectors;
      case "bench corpus" test_corpus;
      case "fuzz corpus" test_fuzz;
      case "field lines, every byte" test_lines ] )

let () =
  Alcotest.run "simd"
    [ ("kernel",
       [ Alcotest.test_case "in use where built" `Quick test_in_use;
         Alcotest.test_case "levels" `Quick test_levels ]);
      agreement 2;
      agreement 1;
      ("scanners against their references",
       [ Alcotest.test_case "every byte in every lane" `Quick test_scanners ]);
      ("zero allocation", alloc_cases ()) ]
