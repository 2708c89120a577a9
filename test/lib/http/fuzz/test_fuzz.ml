(* The short differential run of `make test` (the long one is fuzz.exe,
   `make fuzz`): a fixed seed and budget, zero undocumented disagreements
   with http_parser and h11, and httpz's self-checks (no exception, no span
   outside the input, same answer whatever surrounds the input, one-shot
   and incremental parses agree) on every input. *)
open Httpz_fuzz

let seed = 0x5eed

(* About 20 s on the development machine; HTTPZ_FUZZ_COUNT overrides. *)
let count =
  match Sys.getenv_opt "HTTPZ_FUZZ_COUNT" with
  | Some n -> int_of_string n
  | None -> 80_000

let h11 =
  lazy
    (match H11.start () with
     | Ok h -> at_exit (fun () -> H11.stop h); h
     | Error m -> Alcotest.fail ("h11 oracle unavailable: " ^ m))

let oracles_available () =
  Alcotest.(check bool)
    "http_parser is linked (libhttp-parser-dev, a test dependency of scripts/deps.sh)" true
    (Impl.http_parser_available ());
  ignore (Lazy.force h11 : H11.t)

(* --- The harness itself: oracles answer, categories fire, undocumented
   differences fail. A broken oracle or an over-eager category would
   otherwise pass the differential run silently. *)

(* Per-category examples live in DIFFERENCES.md ("Example:" lines); these
   are the cases that are no single category. *)
let vectors =
  [ ("plain GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", [], []);
    ("plain POST", "POST /x?y HTTP/1.1\r\nHost: a:80\r\nContent-Length: 2\r\n\r\nhi", [], []);
    ("all refuse", "GET / HTTP/1.1\r\nHost: a\r\nX\x00: y\r\n\r\n", [], []);
    (* h11 waits for the empty line, httpz refuses at once: agreement. *)
    ("early refusal", "GET / HTTP/1.1\r\nHo\x00", [], []);
    (* Two categories in a row: the fold is repaired, then the bare LF. *)
    ("fold then bare LF", "GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\nY: c\r\n\r\n",
     [ "obs_fold"; "bare_lf" ], [ "obs_fold"; "bare_lf" ]) ]

let compare_both input =
  let h11 = Lazy.force h11 in
  let hz = Impl.httpz input in
  let r1 =
    Diff.compare { name = Http_parser; run = Impl.http_parser } ~hz_run:Impl.httpz input hz
      (Impl.http_parser input)
  in
  let r2 = Diff.compare { name = H11; run = H11.check h11 } ~hz_run:Impl.httpz input hz (H11.check h11 input) in
  (r1, r2)

let strip_prefix p s =
  let n = String.length p in
  if String.length s > n && String.sub s 0 n = p then String.sub s n (String.length s - n) else s

let vector (name, input, h11_hits, hp_hits) =
  Alcotest.test_case name `Quick (fun () ->
      let hp, h1 = compare_both input in
      let findings = List.map (fun (f : Diff.finding) -> f.detail) (hp.findings @ h1.findings) in
      Alcotest.(check (list string)) "no undocumented difference" [] findings;
      let sorted l = List.sort_uniq compare l in
      Alcotest.(check (list string)) "h11 categories" (sorted h11_hits)
        (sorted (List.map (strip_prefix "h11:") h1.hits));
      Alcotest.(check (list string)) "http_parser categories" (sorted hp_hits)
        (sorted (List.map (strip_prefix "http_parser:") hp.hits)))

let undocumented_fails () =
  (* An oracle that disagrees for no documented reason must be reported. *)
  let input = "GET / HTTP/1.1\r\nHost: a\r\n\r\n" in
  let liar = { Diff.name = Impl.H11; run = (fun _ -> Impl.Reject "liar") } in
  let r = Diff.compare liar ~hz_run:Impl.httpz input (Impl.httpz input) (liar.run input) in
  Alcotest.(check int) "one finding" 1 (List.length r.findings);
  let wrong_facts =
    match Impl.httpz input with
    | Impl.Accept f -> Impl.Accept { f with content_length = Some "7" }
    | _ -> Alcotest.fail "httpz refused a plain GET"
  in
  let liar2 = { liar with run = (fun _ -> wrong_facts) } in
  let r = Diff.compare liar2 ~hz_run:Impl.httpz input (Impl.httpz input) wrong_facts in
  Alcotest.(check int) "facts differ: one finding" 1 (List.length r.findings)

let generator_reproducible () =
  let a = Gen.case ~seed ~index:12345 and b = Gen.case ~seed ~index:12345 in
  Alcotest.(check string) "same (seed, index), same input" a.input b.input;
  Alcotest.(check string) "escape round-trips" a.input (Impl.unescape (Impl.escape a.input))

(* --- DIFFERENCES.md and the code list the same categories. --- *)

let differences_file () =
  List.find_opt Sys.file_exists [ "DIFFERENCES.md"; "test/lib/http/fuzz/DIFFERENCES.md" ]

let documented_ids () =
  match differences_file () with
  | None -> Alcotest.fail "DIFFERENCES.md not found (run from the repository root or via dune)"
  | Some f ->
    let ic = open_in_bin f in
    let ids = ref [] in
    (try
       while true do
         let l = input_line ic in
         (* "### `id`" headings name the categories. *)
         if String.length l > 6 && String.sub l 0 5 = "### `" then
           match String.index_from_opt l 5 '`' with
           | Some j -> ids := String.sub l 5 (j - 5) :: !ids
           | None -> ()
       done
     with End_of_file -> close_in ic);
    List.sort_uniq compare !ids

(* "{N*c}" in an example stands for N copies of c. *)
let expand s =
  let b = Buffer.create (String.length s) in
  let n = String.length s in
  let i = ref 0 in
  while !i < n do
    (match String.index_from_opt s !i '{' with
     | Some j when j = !i && String.contains_from s j '}' ->
       let k = String.index_from s j '}' in
       (match String.split_on_char '*' (String.sub s (j + 1) (k - j - 1)) with
        | [ count; c ] -> Buffer.add_string b (String.concat "" (List.init (int_of_string count) (fun _ -> c)))
        | _ -> Alcotest.failf "bad repetition in example %S" s);
       i := k
     | _ -> Buffer.add_char b s.[!i]);
    incr i
  done;
  Buffer.contents b

(* Each category's "Example: `...`" line, after its "### `id`" heading. *)
let documented_examples () =
  match differences_file () with
  | None -> Alcotest.fail "DIFFERENCES.md not found"
  | Some f ->
    let ic = open_in_bin f in
    let current = ref "" and acc = ref [] in
    (try
       while true do
         let l = input_line ic in
         if String.length l > 6 && String.sub l 0 5 = "### `" then
           current := String.sub l 5 (String.index_from l 5 '`' - 5)
         else if String.length l > 11 && String.sub l 0 10 = "Example: `" then
           acc := (!current, expand (Impl.unescape (String.sub l 10 (String.rindex l '`' - 10)))) :: !acc
       done
     with End_of_file -> close_in ic);
    List.rev !acc

let example (id, input) =
  Alcotest.test_case id `Quick (fun () ->
      let hp, h1 = compare_both input in
      let findings = List.map (fun (f : Diff.finding) -> f.detail) (hp.findings @ h1.findings) in
      Alcotest.(check (list string)) "no undocumented difference" [] findings;
      let hits = List.map (strip_prefix "h11:") h1.hits @ List.map (strip_prefix "http_parser:") hp.hits in
      if not (List.mem id hits) then
        Alcotest.failf "example of %s classified as [%s]" id (String.concat "; " hits))

let categories_documented () =
  let code = List.sort_uniq compare (List.map (fun (c : Categories.category) -> c.id) Categories.all) in
  Alcotest.(check (list string)) "category ids in categories.ml = ### headings in DIFFERENCES.md" code
    (documented_ids ());
  Alcotest.(check (list string)) "one example per category" code
    (List.sort_uniq compare (List.map fst (documented_examples ())))

(* --- The run. --- *)

let differential () =
  let h11 = Lazy.force h11 in
  let stats =
    Fuzz_loop.run
      { seed; count; seconds = infinity; first_index = 0; max_print = 20; progress = false }
      h11
  in
  Fuzz_loop.print_summary stats;
  Alcotest.(check int) "inputs fuzzed" count stats.inputs;
  Alcotest.(check int) "undocumented findings (printed above with seed and index)" 0 stats.findings;
  (* The generator must keep producing heads all three accept, or the
     comparison of facts tests nothing. *)
  let accepted who = Option.value ~default:0 (Hashtbl.find_opt stats.verdicts (who ^ ":accept")) in
  List.iter
    (fun who ->
      if accepted who * 5 < count then
        Alcotest.failf "%s accepted only %d of %d inputs" who (accepted who) count)
    [ "httpz"; "h11"; "http_parser" ]

let () =
  Alcotest.run "fuzz"
    [ ("harness",
       [ Alcotest.test_case "oracles available" `Quick oracles_available;
         Alcotest.test_case "undocumented differences are findings" `Quick undocumented_fails;
         Alcotest.test_case "generator reproducible" `Quick generator_reproducible;
         Alcotest.test_case "DIFFERENCES.md lists every category" `Quick categories_documented ]);
      ("vectors", List.map vector vectors);
      ("DIFFERENCES.md examples", List.map example (documented_examples ()));
      ("differential", [ Alcotest.test_case (Printf.sprintf "seed %#x, %d inputs" seed count) `Slow differential ]) ]
