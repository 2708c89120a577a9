(* Parse latency under GC pressure: httpz against cohttp.

   The program first builds a live heap of a few hundred MB (a Hashtbl of
   1M string keys to 200-byte string values, the shape of an in-memory
   cache). Then each iteration, identical for both parsers, does

     t0  parse the medium request once           (the parser under test)
     t1  replace one random cache value          (the application's churn:
     t2                                           ~27 words, promoted, so
                                                   old values become major
                                                   garbage and the major GC
                                                   keeps running)

   and records t1 - t0 (parse latency, the headline) and t2 - t0 (the
   whole iteration). Both impls run the same loop code, the same churn
   sequence, from the same heap state (a full major GC before each phase),
   so the only difference is the parser's own allocation. OCaml 4.13 runs
   its GC only at allocation points: a parse that allocates nothing can
   never be interrupted by a minor collection or a major slice, one that
   allocates pays for them inside its own latency.

   Clock: CLOCK_MONOTONIC through a [@@noalloc] [@untagged] stub
   (Httpz_bench.now_ns), which allocates nothing and costs one vDSO call;
   its own cost (an empty timed region) is reported as timer_overhead_ns
   and not subtracted. Samples go into preallocated int arrays. *)

open Httpz
module B = Httpz_bench

type config = { mode : string; entries : int; value_len : int; iterations : int; warmup : int }

(* quick: the major GC runs slices but seldom completes a cycle in 400k
   iterations (a cycle takes ~1.5M: 27 promoted words each against ~38M
   live words); full completes at least one (2M iterations: 58 s for 3M
   measured 33 s on a faster day of this machine, then 58 s, past the
   step's 60 s limit in bench/run.sh). *)
let quick = { mode = "quick"; entries = 1_000_000; value_len = 200; iterations = 400_000; warmup = 20_000 }
let full = { mode = "full"; entries = 1_000_000; value_len = 200; iterations = 2_000_000; warmup = 50_000 }

(* ----------------------------------------------------------- live heap *)

type heap = { keys : string array; tbl : (string, string) Hashtbl.t; value_len : int; seed : int ref }

let build_heap cfg =
  let keys = Array.init cfg.entries (fun i -> "cache-key:" ^ string_of_int i) in
  let tbl = Hashtbl.create cfg.entries in
  Array.iter (fun k -> Hashtbl.replace tbl k (String.make cfg.value_len 'v')) keys;
  { keys; tbl; value_len = cfg.value_len; seed = ref 12345 }

(* One cache update: a fresh value (allocated in the minor heap, then
   promoted because the table keeps it) replaces a pseudo-random entry,
   whose old value becomes major-heap garbage. The LCG allocates nothing,
   and both phases restart it from the same seed. *)
let churn h =
  let s = (!(h.seed) * 1103515245 + 12345) land 0x3fff_ffff in
  h.seed := s;
  let k = Array.unsafe_get h.keys (s mod Array.length h.keys) in
  Hashtbl.replace h.tbl k (Bytes.unsafe_to_string (Bytes.create h.value_len))

(* ------------------------------------------------------------- a phase *)

type phase = {
  impl : string;
  parse : int array;  (** ns of each parse *)
  iter : int array;  (** ns of parse + churn *)
  live_words : int;
  minor_gcs : int;
  major_cycles : int;
  words_per_iter : float;
  promoted_per_iter : float;
}

(* The same code for both implementations: [op ()] parses once and is 0
   on success. *)
let run_loop h (op : unit -> int) parse iter n =
  let bad = ref 0 in
  for k = 0 to n - 1 do
    let t0 = B.now_ns () in
    bad := !bad + op ();
    let t1 = B.now_ns () in
    churn h;
    let t2 = B.now_ns () in
    Array.unsafe_set parse k (t1 - t0);
    Array.unsafe_set iter k (t2 - t0)
  done;
  !bad

let phase cfg h impl op =
  let parse = Array.make cfg.iterations 0 and iter = Array.make cfg.iterations 0 in
  h.seed := 12345;
  if run_loop h op parse iter cfg.warmup <> 0 then failwith (impl ^ ": parse failed");
  Gc.full_major ();
  let live_words = (Gc.stat ()).Gc.live_words in
  h.seed := 12345;
  let s0 = Gc.quick_stat () in
  let w0 = Gc.minor_words () in
  let bad = run_loop h op parse iter cfg.iterations in
  let w1 = Gc.minor_words () in
  let s1 = Gc.quick_stat () in
  if bad <> 0 then failwith (impl ^ ": parse failed");
  {
    impl; parse; iter; live_words;
    minor_gcs = s1.Gc.minor_collections - s0.Gc.minor_collections;
    major_cycles = s1.Gc.major_collections - s0.Gc.major_collections;
    words_per_iter = (w1 -. w0) /. float cfg.iterations;
    promoted_per_iter = (s1.Gc.promoted_words -. s0.Gc.promoted_words) /. float cfg.iterations;
  }

(* ------------------------------------------------------------- summary *)

let sort a = Array.sort (fun (x : int) y -> compare x y) a

let percentiles a =
  let n = Array.length a in
  let p q = B.Int (B.percentile a n q) in
  [ ("p50", p 50.); ("p99", p 99.); ("p99.9", p 99.9); ("p99.99", p 99.99); ("max", B.Int a.(n - 1)) ]

(* Log-spaced buckets, four per octave (each ~19% wider than the last),
   [upper_ns, count] for every bucket from the first to the last
   non-empty one. A sample s falls in the first bucket with s <= upper. *)
let histogram sorted =
  let n = Array.length sorted in
  let bounds = ref [] and b = ref 8. in
  while !b < float sorted.(n - 1) *. 1.2 +. 1. do
    bounds := int_of_float (Float.round !b) :: !bounds;
    b := !b *. 1.189207115
  done;
  let bounds = List.rev (int_of_float (Float.round !b) :: !bounds) in
  let i = ref 0 in
  let buckets =
    List.map
      (fun ub ->
        let c = ref 0 in
        while !i < n && sorted.(!i) <= ub do incr c; incr i done;
        (ub, !c))
      (List.sort_uniq compare bounds)
  in
  let rec drop = function (_, 0) :: t -> drop t | l -> l in
  let trimmed = List.rev (drop (List.rev (drop buckets))) in
  B.List (List.map (fun (ub, c) -> B.List [ B.Int ub; B.Int c ]) trimmed)

let mean a = float (Array.fold_left ( + ) 0 a) /. float (Array.length a)

let result p =
  sort p.parse;
  sort p.iter;
  B.Obj
    ([ ("impl", B.String p.impl); ("request", B.String "medium") ]
    @ percentiles p.parse
    @ [
        ("mean", B.Float (mean p.parse));
        ("samples", B.Int (Array.length p.parse));
        ("histogram", histogram p.parse);
        ("live_heap_words", B.Int p.live_words);
        ("minor_gcs", B.Int p.minor_gcs);
        ("major_cycles", B.Int p.major_cycles);
        ("words_per_iteration", B.Float p.words_per_iter);
        ("promoted_words_per_iteration", B.Float p.promoted_per_iter);
        (* The churn's own histogram too: the report draws both and
           bounds each percentile's uncertainty from them. *)
        ( "with_churn",
          B.Obj (percentiles p.iter @ [ ("mean", B.Float (mean p.iter)); ("histogram", histogram p.iter) ]) );
      ])

let timer_overhead () =
  let n = 100_000 in
  let a = Array.make n 0 in
  for k = 0 to n - 1 do
    let t0 = B.now_ns () in
    let t1 = B.now_ns () in
    Array.unsafe_set a k (t1 - t0)
  done;
  sort a;
  B.percentile a n 50.

let () =
  let json_out = ref false and cfg = ref quick in
  Array.iteri
    (fun i a ->
      if i > 0 then
        match a with
        | "--json" -> json_out := true
        | "--quick" -> cfg := quick
        | "--full" -> cfg := full
        | _ ->
            prerr_endline "usage: bench_latency.exe [--json] [--quick|--full]   (default --quick, human-readable)";
            exit 2)
    Sys.argv;
  let cfg = !cfg in
  let loadavg_start = B.loadavg () in
  let text = B.read_file (Filename.concat (B.corpus_dir ()) "medium.http") in
  let buf = Bigstring.of_string text and len = String.length text in
  let st = Request.create () in
  let httpz_op () = match Request.parse st buf ~off:0 ~len with Request.Complete -> 0 | _ -> 1 in
  let h = build_heap cfg in
  let overhead = timer_overhead () in
  (* httpz first, then cohttp, each from a full major GC and the same
     churn seed (a list literal would evaluate right to left). *)
  let first = phase cfg h "httpz" httpz_op in
  let phases =
    first
    :: (if Cohttp_peer.available then [ phase cfg h "cohttp" (fun () -> Cohttp_peer.parse_batch text 1) ] else [])
  in
  let description =
    Printf.sprintf
      "Latency of parsing the medium request (%d B) once, %d times per parser, while the program keeps \
       %d cache entries (%d-byte string values, ~%d MB live) and replaces one entry per request \
       (a fixed, identical allocation churn for both parsers, so the major GC keeps working). \
       p50..max are the parse alone; with_churn times parse + cache update. Clock: CLOCK_MONOTONIC \
       through a non-allocating stub (%d ns per reading pair, not subtracted)."
      len cfg.iterations cfg.entries cfg.value_len
      ((List.hd phases).live_words * (Sys.word_size / 8) / 1_000_000)
      overhead
  in
  if !json_out then begin
    let results = List.map result phases in
    print_endline
      (B.to_string
         (B.Obj
            [
              ("schema", B.String "httpz-bench-latency/1");
              ("mode", B.String cfg.mode);
              ("machine", B.machine ~loadavg_start);
              ("description", B.String description);
              ( "config",
                B.Obj
                  [
                    ("entries", B.Int cfg.entries);
                    ("value_bytes", B.Int cfg.value_len);
                    ("iterations", B.Int cfg.iterations);
                    ("warmup", B.Int cfg.warmup);
                    ("timer_overhead_ns", B.Int overhead);
                    ("histogram", B.String "log-spaced, 4 buckets per octave, [upper_ns, count], empty ends trimmed");
                  ] );
              ("results", B.List results);
            ]))
  end
  else begin
    print_endline description;
    Printf.printf "\n%-8s %8s %8s %8s %8s %10s  %9s %9s %8s %8s  %s\n" "impl" "p50" "p99" "p99.9" "p99.99" "max"
      "minor GCs" "major cyc" "words/it" "promo/it" "with churn p50/p99.9/max";
    List.iter
      (fun p ->
        sort p.parse;
        sort p.iter;
        let n = Array.length p.parse in
        let q a x = B.percentile a n x in
        Printf.printf "%-8s %8d %8d %8d %8d %10d  %9d %9d %8.1f %8.1f  %d/%d/%d\n" p.impl (q p.parse 50.) (q p.parse 99.)
          (q p.parse 99.9) (q p.parse 99.99) p.parse.(n - 1) p.minor_gcs p.major_cycles p.words_per_iter
          p.promoted_per_iter
          (q p.iter 50.) (q p.iter 99.9) p.iter.(n - 1))
      phases;
    print_endline "(ns)"
  end
