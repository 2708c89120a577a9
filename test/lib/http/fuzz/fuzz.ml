(* The long run of `make fuzz` and the replay of findings; see DIFFERENCES.md. *)
open Httpz_fuzz
let () =
  let seed = ref 0 and count = ref max_int and seconds = ref infinity and index = ref (-1) in
  let input = ref "" and max_print = ref 20 in
  Arg.parse
    [ ("--seed", Arg.Set_int seed, "N  the run's seed (default 0; a random one when negative)");
      ("--count", Arg.Set_int count, "N  inputs to fuzz");
      ("--seconds", Arg.Set_float seconds, "S  wall-clock budget");
      ("--index", Arg.Set_int index, "I  run only input I of the seed, verbosely (to reproduce a finding)");
      ("--input", Arg.Set_string input, "ESCAPED  run one input given as printed in a finding");
      ("--print", Arg.Set_int max_print, "N  findings printed in full (default 20)") ]
    (fun a -> raise (Arg.Bad a))
    "fuzz.exe [--seed N] [--count N | --seconds S] | [--seed N --index I] | [--input ESCAPED]";
  if !seed < 0 then (Random.self_init (); seed := Random.bits ());
  if not (Impl.http_parser_available ()) then begin
    prerr_endline "fuzz: http_parser unavailable: install libhttp-parser-dev (scripts/deps.sh test)";
    exit 2
  end;
  let h11 = match H11.start () with Ok h -> h | Error m -> prerr_endline ("fuzz: " ^ m); exit 2 in
  let code =
    if !input <> "" then (if Fuzz_loop.run_one h11 (Impl.unescape !input) = [] then 0 else 1)
    else if !index >= 0 then begin
      let c = Gen.case ~seed:!seed ~index:!index in
      Printf.printf "seed=%d index=%d mutations=[%s]\n" !seed !index (String.concat "," c.mutations);
      if Fuzz_loop.run_one h11 c.input = [] then 0 else 1
    end else begin
      if !count = max_int && !seconds = infinity then count := 200_000;
      Printf.printf "fuzz: seed %d\n%!" !seed;
      let stats =
        Fuzz_loop.run
          { seed = !seed; count = !count; seconds = !seconds; first_index = 0; max_print = !max_print;
            progress = true }
          h11
      in
      Fuzz_loop.print_summary stats;
      if stats.findings = 0 then 0 else 1
    end
  in
  H11.stop h11;
  exit code
