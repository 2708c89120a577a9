(* Request-head parser and response-head writer microbenchmarks: httpz
   against cohttp, Node's C http_parser and picohttpparser (Debian's build
   and an SSE4.2 build) on the corpus in bench/requests.

   Method. Each case is a function [run n] that performs [n] operations
   and returns the elapsed CLOCK_MONOTONIC nanoseconds of that batch only
   (for http_parser and picohttpparser the loop and the clock both run in
   C, so no OCaml-to-C call is timed). [n] is calibrated per case so that a
   batch lasts [batch_ms]; after one warm-up batch per case, the runs go
   round-robin over all cases, so background noise on this shared machine
   lands on every implementation alike rather than on whichever ran at
   the wrong moment. Minor-heap words are read (Gc.minor_words, which
   does not allocate) around every batch. *)

open Httpz
module B = Httpz_bench

external hp_loop : Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_bench_hp_loop_byte" "httpz_bench_hp_loop"
  [@@noalloc]

external hp_headers : Bigstring.t -> (int[@untagged]) -> (int[@untagged])
  = "httpz_bench_hp_headers_byte" "httpz_bench_hp_headers"
  [@@noalloc]

external hp_span : (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_bench_hp_span_byte" "httpz_bench_hp_span"
  [@@noalloc]

let hp_available = hp_headers (Bigstring.create 1) 0 <> -2

(* picohttpparser, two builds in slots of pico_stubs.c: Debian's (no
   SSE4.2) and the SSE4.2 build bench/parse/pico_sse42.sh compiles at bench
   time, whose path comes in HTTPZ_PICO_SSE42. *)
external pico_open : int -> string -> int = "httpz_bench_pico_open"

external pico_loop :
  (int[@untagged]) -> Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_bench_pico_loop_byte" "httpz_bench_pico_loop"
  [@@noalloc]

external pico_headers : (int[@untagged]) -> Bigstring.t -> (int[@untagged]) -> (int[@untagged])
  = "httpz_bench_pico_headers_byte" "httpz_bench_pico_headers"
  [@@noalloc]

external pico_span : Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_bench_pico_span_byte" "httpz_bench_pico_span"
  [@@noalloc]

type pico = { slot : int; pico_impl : string; source : string }

let picos =
  let debian = "libh2o-evloop.so" in
  let sse42 = Option.value (Sys.getenv_opt "HTTPZ_PICO_SSE42") ~default:"" in
  List.filter
    (fun p -> p.source <> "" && pico_open p.slot p.source = 0)
    [ { slot = 0; pico_impl = "picohttpparser"; source = debian };
      { slot = 1; pico_impl = "picohttpparser_sse42"; source = sse42 } ]

(* ------------------------------------------------------------ the corpus *)

type request = { name : string; text : string; buf : Bigstring.t; len : int }

let load_requests () =
  let dir = B.corpus_dir () in
  List.map
    (fun name ->
      let text = B.read_file (Filename.concat dir (name ^ ".http")) in
      { name; text; buf = Bigstring.of_string text; len = String.length text })
    B.requests

(* ----------------------------------------------------------- operations *)

(* The loops are monomorphic and call the parser directly: no closure or
   functor indirection per iteration on the httpz side. *)
let httpz_batch st buf len n =
  let bad = ref 0 in
  for _ = 1 to n do
    match Request.parse st buf ~off:0 ~len with
    | Request.Complete -> ()
    | Request.Partial | Request.Error -> incr bad
  done;
  !bad

let now = 1_700_000_000 (* fixed: every Date comes from the cache, as in a busy second *)
let mtime = 1_690_000_000
let etag = "\"65a1b2c3-1000\""
let out = Bigstring.create 4096
let date_cache = Date.Cache.create ()

let full_head () =
  let o = Response.status_line out ~off:0 Version.Http_1_1 Status.Ok in
  let o = Response.date out ~off:o date_cache ~now in
  let o = Response.header out ~off:o Header_name.Content_type "text/html; charset=utf-8" in
  let o = Response.header_int out ~off:o Header_name.Content_length 4096 in
  let o = Response.header out ~off:o Header_name.Connection "keep-alive" in
  let o = Response.header out ~off:o Header_name.Etag etag in
  let o = Response.header_date out ~off:o Header_name.Last_modified mtime in
  Response.end_head out ~off:o

let full_head_batch n =
  let last = ref 0 in
  for _ = 1 to n do last := full_head () done;
  !last

let status_line_batch n =
  let last = ref 0 in
  for _ = 1 to n do last := Response.status_line out ~off:0 Version.Http_1_1 Status.Ok done;
  !last

let imf t =
  let b = Bigstring.create Date.imf_fixdate_length in
  ignore (Date.write_imf_fixdate b ~off:0 t);
  Bigstring.to_string b

(* --------------------------------------------------------------- cases *)

type case = {
  impl : string;
  kind : [ `Parse of request | `Response of string ];
  bytes : int;
  c_code : bool;  (** off the OCaml heap: words/op reported as null *)
  run : int -> int;  (** [run n]: ns for [n] operations *)
  mutable n : int;
  mutable ns : float list;  (** ns/op of each run, newest first *)
  mutable words : float;  (** minor words over all runs *)
  mutable ops : int;
}

let fail fmt = Printf.ksprintf (fun s -> prerr_endline ("bench_parse: " ^ s); exit 1) fmt

let timed batch n =
  let t0 = B.now_ns () in
  let bad = batch n in
  let t1 = B.now_ns () in
  if bad <> 0 then fail "%d of %d parses failed" bad n;
  t1 - t0

let parse_cases reqs =
  List.concat_map
    (fun r ->
      let st = Request.create () in
      let httpz =
        {
          impl = "httpz"; kind = `Parse r; bytes = r.len; c_code = false;
          run = timed (httpz_batch st r.buf r.len);
          n = 0; ns = []; words = 0.; ops = 0;
        }
      in
      (* The same parser without its C kernel, every byte in OCaml: on
         request (HTTPZ_BENCH_PORTABLE=1), as four more cases would not fit
         make bench's time budget (bench/run.sh). *)
      let portable =
        if Sys.getenv_opt "HTTPZ_BENCH_PORTABLE" <> Some "1" then []
        else
          let st = Request.create ~simd:false () in
          [ { httpz with impl = "httpz_portable"; run = timed (httpz_batch st r.buf r.len) } ]
      in
      let cohttp =
        if not Cohttp_peer.available then []
        else
          [ { httpz with impl = "cohttp"; run = timed (Cohttp_peer.parse_batch r.text) } ]
      in
      let hp =
        if not hp_available then []
        else
          [
            {
              httpz with
              impl = "http_parser";
              c_code = true;
              run =
                (fun n ->
                  let e = hp_loop r.buf r.len n in
                  if e < 0 then fail "http_parser rejected %s" r.name;
                  e);
            };
          ]
      in
      let pico =
        List.map
          (fun p ->
            {
              httpz with
              impl = p.pico_impl;
              c_code = true;
              run =
                (fun n ->
                  let e = pico_loop p.slot r.buf r.len n in
                  if e < 0 then fail "%s rejected %s" p.pico_impl r.name;
                  e);
            })
          picos
      in
      (httpz :: portable) @ cohttp @ hp @ pico)
    reqs

let response_cases () =
  let len_full = full_head () in
  let len_status = status_line_batch 1 in
  let mk impl case bytes run =
    { impl; kind = `Response case; bytes; c_code = false; run; n = 0; ns = []; words = 0.; ops = 0 }
  in
  let ok f n = ignore (f n); 0 in
  let cohttp =
    if not Cohttp_peer.available then []
    else begin
      Cohttp_peer.response_setup ~date:(imf now) ~etag ~last_modified:(imf mtime);
      [ mk "cohttp" "full_head" (Cohttp_peer.response_batch 1) (timed (ok Cohttp_peer.response_batch)) ]
    end
  in
  [
    mk "httpz" "full_head" len_full (timed (ok full_head_batch));
    mk "httpz" "status_line" len_status (timed (ok status_line_batch));
  ]
  @ cohttp

(* ---------------------------------------------------------- sanity check *)

(* Every implementation must accept every request and see the same
   header fields before its time means anything. *)
let check reqs ~verbose =
  List.iter
    (fun r ->
      let st = Request.create () in
      (match Request.parse st r.buf ~off:0 ~len:r.len with
      | Request.Complete -> ()
      | _ -> fail "httpz does not parse %s" r.name);
      let hz = Request.header_count st in
      let co = if Cohttp_peer.available then Cohttp_peer.header_count r.text else -2 in
      let hp = if hp_available then hp_headers r.buf r.len else -2 in
      if Cohttp_peer.available && co < 0 then fail "cohttp does not parse %s" r.name;
      if hp_available && hp < 0 then fail "http_parser does not parse %s" r.name;
      (* Header spans of a peer's last parse against httpz's. *)
      let mismatches count span =
        let mism = ref 0 in
        for i = 0 to min hz count - 1 do
          let n = Request.header_name_span st i and v = Request.header_value st i in
          let pn = span 0 i and pv = span 1 i in
          let m = (1 lsl 31) - 1 in
          if Span.off n <> pn lsr 31 || Span.len n <> pn land m
             || Span.off v <> pv lsr 31 || Span.len v <> pv land m
          then incr mism
        done;
        !mism
      in
      let mism = if hp_available then mismatches hp hp_span else 0 in
      let pico =
        List.map
          (fun p ->
            let count = pico_headers p.slot r.buf r.len in
            if count < 0 then fail "%s does not parse %s" p.pico_impl r.name;
            (p.pico_impl, count, mismatches count (pico_span r.buf)))
          picos
      in
      let agree =
        (co < 0 || co = hz) && (hp < 0 || hp = hz) && mism = 0
        && List.for_all (fun (_, c, m) -> c = hz && m = 0) pico
      in
      if verbose || not agree then
        Printf.eprintf "%-9s %5d B  headers: httpz %d, cohttp %s, http_parser %s%s; span mismatches vs http_parser: %d%s%s\n"
          r.name r.len hz
          (if co = -2 then "n/a" else string_of_int co)
          (if hp = -2 then "n/a" else string_of_int hp)
          (String.concat "" (List.map (fun (i, c, _) -> Printf.sprintf ", %s %d" i c) pico))
          mism
          (String.concat "" (List.map (fun (i, _, m) -> Printf.sprintf ", vs %s: %d" i m) pico))
          (if agree then "" else "  <-- DISAGREE"))
    reqs

(* ---------------------------------------------------------- measurement *)

type config = { mode : string; runs : int; batch_ns : int }

let quick = { mode = "quick"; runs = 7; batch_ns = 30_000_000 }
(* 15 cases x (calibration + 1 warm-up + 15 runs) batches of 60 ms take
   ~15 s: the share of make bench's 15-minute budget this step gets
   (bench/run.sh). A batch is still ~10^5-10^6 operations. *)
let full = { mode = "full"; runs = 15; batch_ns = 60_000_000 }

(* Grows [n] until a batch lasts a tenth of the target, then scales it. *)
let calibrate c target =
  let rec go n =
    let e = c.run n in
    if e >= target / 10 || n >= 1 lsl 30 then max 1 (int_of_float (float n *. float target /. float (max 1 e)))
    else go (n * 4)
  in
  c.n <- go 1

let measure c =
  let w0 = Gc.minor_words () in
  let e = c.run c.n in
  let w1 = Gc.minor_words () in
  c.ns <- (float e /. float c.n) :: c.ns;
  c.words <- c.words +. (w1 -. w0);
  c.ops <- c.ops + c.n

let bench cfg cases =
  List.iter (fun c -> calibrate c cfg.batch_ns; ignore (c.run c.n)) cases;
  for _ = 1 to cfg.runs do List.iter measure cases done

let stats c =
  let a = Array.of_list (List.rev c.ns) in
  (B.median a, Array.fold_left min infinity a, Array.fold_left max neg_infinity a, a)

let words_per_op c = c.words /. float c.ops

(* ---------------------------------------------------------------- output *)

let json_of_case c =
  let med, mn, mx, a = stats c in
  let runs = B.List (Array.to_list (Array.map (fun x -> B.Float x) a)) in
  let words = if c.c_code then B.Null else B.Float (words_per_op c) in
  let common =
    [
      ("bytes", B.Int c.bytes);
      ("ns_per_op", B.Obj [ ("median", B.Float med); ("min", B.Float mn); ("max", B.Float mx); ("runs", runs) ]);
      ("runs", runs);
      ("words_per_op", words);
      ("iterations_per_run", B.Int c.n);
    ]
  in
  match c.kind with
  | `Parse r -> B.Obj ((("impl", B.String c.impl) :: ("request", B.String r.name) :: common) @ [ ("instructions", B.Null) ])
  | `Response case -> B.Obj (("impl", B.String c.impl) :: ("case", B.String case) :: common)

let json cfg ~loadavg_start parse resp =
  B.Obj
    [
      ("schema", B.String "httpz-bench-parse/1");
      ("mode", B.String cfg.mode);
      ("machine", B.machine ~loadavg_start);
      ( "config",
        B.Obj
          [
            ("runs", B.Int cfg.runs);
            ("batch_target_ms", B.Int (cfg.batch_ns / 1_000_000));
            ("warmup", B.String "one batch per case, after calibration");
            ("order", B.String "round-robin over all cases, one batch each per run");
            ("clock", B.String "CLOCK_MONOTONIC around each batch (inside C for http_parser and picohttpparser)");
            ("words", B.String "Gc.minor_words delta over all runs / operations; null for C (off the OCaml heap)");
            ( "httpz",
              B.String
                (if Request.simd (Request.create ())
                 then "Request.create (): field lines, target and Host through the SSE2 kernel (lib/core/simd_stubs.c)"
                 else "Request.create (): no SIMD kernel on this machine, the portable OCaml path") );
            ("httpz_portable", B.String "Request.create ~simd:false (): every byte in OCaml (Httpz.Swar)");
            ("cohttp", B.String (if Cohttp_peer.available then "4.0.0: Request.Make(in-memory IO).read" else "not installed"));
            ("http_parser", B.String (if hp_available then "libhttp_parser (Debian libhttp-parser-dev), span-recording callbacks" else "not installed"));
            ( "picohttpparser",
              B.String
                (if List.exists (fun p -> p.slot = 0) picos
                 then "phr_parse_request from libh2o-evloop.so (Debian libh2o-evloop-dev, built without SSE4.2)"
                 else "not installed") );
            ( "picohttpparser_sse42",
              B.String
                (match List.find_opt (fun p -> p.slot = 1) picos with
                 | Some p -> "picohttpparser.c from PyPI pypicohp 0.1.3 (upstream commit 066d2b1e), cc -O3 -msse4.2: " ^ p.source
                 | None -> "not available (HTTPZ_PICO_SSE42 unset or not loadable: see bench/parse/pico_sse42.sh)") );
            ("response_full_head", B.String "status line, Date (cached), Content-Type, Content-Length, Connection, ETag, Last-Modified, CRLF; cohttp gets its Date and Last-Modified strings preformatted");
          ] );
      ("results", B.List (List.map json_of_case parse));
      ("response", B.List (List.map json_of_case resp));
      ("instructions", B.List []);
    ]

let human cfg parse resp =
  Printf.printf "bench_parse (%s): %d runs of ~%d ms batches per case; median [min-max] ns/op\n\n"
    cfg.mode cfg.runs (cfg.batch_ns / 1_000_000);
  let line c ~base =
    let med, mn, mx, _ = stats c in
    let words = if c.c_code then "   (C, off-heap)" else Printf.sprintf "%10.1f words" (words_per_op c) in
    let ratio =
      match base with
      | Some b when b != c ->
          let bm, _, _, _ = stats b in
          Printf.sprintf "  %6.2fx httpz's time" (med /. bm)
      | _ -> ""
    in
    Printf.printf "  %-12s %9.1f ns [%8.1f-%8.1f] %7.0f MB/s %s%s\n" c.impl med mn mx
      (float c.bytes *. 1e3 /. med) words ratio
  in
  let groups key cs =
    List.fold_left (fun acc c -> if List.mem (key c) acc then acc else acc @ [ key c ]) [] cs
    |> List.map (fun k -> (k, List.filter (fun c -> key c = k) cs))
  in
  let name c = match c.kind with `Parse r -> r.name | `Response s -> s in
  List.iter
    (fun (k, cs) ->
      Printf.printf "parse %s (%d bytes)\n" k (List.hd cs).bytes;
      let base = List.find_opt (fun c -> c.impl = "httpz") cs in
      List.iter (line ~base) cs)
    (groups name parse);
  Printf.printf "\nresponse head\n";
  List.iter
    (fun (k, cs) ->
      Printf.printf "%s\n" k;
      let base = List.find_opt (fun c -> c.impl = "httpz") cs in
      List.iter (line ~base) cs)
    (groups name resp)

(* ------------------------------------------------------------ callgrind *)

(* Just [n] operations, nothing timed: instructions.sh runs this under
   callgrind for two values of [n] and takes the difference, which
   cancels start-up and set-up. *)
let callgrind_one reqs impl what n =
  let find () =
    match List.find_opt (fun r -> r.name = what) reqs with
    | Some r -> r
    | None -> fail "unknown request %s" what
  in
  match (impl, what) with
  | "httpz", "full_head" -> ignore (full_head_batch n)
  | "httpz", "status_line" -> ignore (status_line_batch n)
  | "cohttp", "full_head" ->
      Cohttp_peer.response_setup ~date:(imf now) ~etag ~last_modified:(imf mtime);
      ignore (Cohttp_peer.response_batch n)
  | ("httpz" | "httpz_portable"), _ ->
      let r = find () in
      let st = Request.create ~simd:(impl = "httpz" && Simd.available) () in
      if httpz_batch st r.buf r.len n <> 0 then fail "%s failed" impl
  | "cohttp", _ ->
      if not Cohttp_peer.available then fail "cohttp is not installed";
      let r = find () in
      if Cohttp_peer.parse_batch r.text n <> 0 then fail "cohttp failed"
  | "http_parser", _ ->
      if not hp_available then fail "http_parser is not installed";
      let r = find () in
      if hp_loop r.buf r.len n < 0 then fail "http_parser failed"
  | ("picohttpparser" | "picohttpparser_sse42"), _ -> (
      match List.find_opt (fun p -> p.pico_impl = impl) picos with
      | None -> fail "%s is not available" impl
      | Some p ->
          let r = find () in
          if pico_loop p.slot r.buf r.len n < 0 then fail "%s failed" impl)
  | _ -> fail "unknown implementation %s" impl

let usage () =
  prerr_endline
    "usage: bench_parse.exe [--json] [--quick|--full]\n\
    \       bench_parse.exe --check\n\
    \       bench_parse.exe --callgrind-one httpz|httpz_portable|cohttp|http_parser|picohttpparser|picohttpparser_sse42 REQUEST|full_head|status_line N\n\
     Default: --quick, human-readable. --json prints the httpz-bench-parse/1 document on stdout.\n\
     HTTPZ_PICO_SSE42=LIB adds picohttpparser's SSE4.2 build (bench/parse/pico_sse42.sh prints LIB).";
  exit 2

let () =
  let args = List.tl (Array.to_list Sys.argv) in
  let reqs = load_requests () in
  match args with
  | [ "--callgrind-one"; impl; what; n ] -> (
      match int_of_string_opt n with Some n when n >= 0 -> callgrind_one reqs impl what n | _ -> usage ())
  | [ "--check" ] -> check reqs ~verbose:true
  | _ ->
      let json_out = ref false and cfg = ref quick in
      List.iter
        (function
          | "--json" -> json_out := true
          | "--quick" -> cfg := quick
          | "--full" -> cfg := full
          | _ -> usage ())
        args;
      let cfg = !cfg in
      let loadavg_start = B.loadavg () in
      check reqs ~verbose:false;
      let parse = parse_cases reqs and resp = response_cases () in
      bench cfg (parse @ resp);
      if !json_out then print_endline (B.to_string (json cfg ~loadavg_start parse resp))
      else human cfg parse resp
