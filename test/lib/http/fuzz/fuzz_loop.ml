type config = {
  seed : int;
  count : int;            (* inputs; max_int for "until the time is up" *)
  seconds : float;        (* wall-clock budget; infinity for none *)
  first_index : int;
  max_print : int;        (* findings printed in full *)
  progress : bool;
}

type stats = {
  mutable inputs : int;
  mutable bytes : int;
  mutable elapsed : float;
  mutable h11_batch_time : float;     (* waiting for h11's batched verdicts *)
  verdicts : (string, int) Hashtbl.t;   (* "httpz:accept", "h11:partial", ... *)
  hits : (string, int) Hashtbl.t;       (* "h11:bare_lf" -> count *)
  kinds : (string, int) Hashtbl.t;      (* finding kind -> count *)
  mutable findings : int;
  mutable printed : int;
}

let bump tbl k = Hashtbl.replace tbl k (1 + Option.value ~default:0 (Hashtbl.find_opt tbl k))

let verdict_name = function Impl.Accept _ -> "accept" | Impl.Partial -> "partial" | Impl.Reject _ -> "reject"

(* Long inputs are shortened on screen; --seed/--index reproduces them. *)
let shown s =
  let e = Impl.escape s in
  let n = String.length e in
  if n <= 1500 then "\"" ^ e ^ "\""
  else Printf.sprintf "\"%s\" ... (%d bytes) ... \"%s\"" (String.sub e 0 600) (String.length s) (String.sub e (n - 300) 300)

let print_finding ~seed ~index (c : Gen.case) (f : Diff.finding) =
  Printf.printf "FINDING %s  seed=%d index=%d  mutations=[%s]\n  input:  %s\n" f.kind seed index
    (String.concat "," c.mutations) (shown c.input);
  if f.input <> c.input then Printf.printf "  as:     %s\n" (shown f.input);
  Printf.printf "  %s\n%!" (String.concat "\n  " (String.split_on_char '\n' f.detail))

let check_case (h11 : H11.t) ~h11_result stats (c : Gen.case) =
  let hz, self = Diff.httpz_checked ~split:c.split c.input in
  let hp = Impl.http_parser c.input in
  bump stats.verdicts ("httpz:" ^ verdict_name hz);
  bump stats.verdicts ("http_parser:" ^ verdict_name hp);
  bump stats.verdicts ("h11:" ^ verdict_name h11_result);
  let hp_oracle = { Diff.name = Impl.Http_parser; run = Impl.http_parser } in
  let h11_oracle = { Diff.name = Impl.H11; run = H11.check h11 } in
  let cmp o r = Diff.compare o ~hz_run:Impl.httpz c.input hz r in
  let r1 = cmp hp_oracle hp and r2 = cmp h11_oracle h11_result in
  List.iter (bump stats.hits) (r1.hits @ r2.hits);
  let findings = self @ r1.findings @ r2.findings in
  List.iter
    (fun (f : Diff.finding) ->
      stats.findings <- stats.findings + 1;
      bump stats.kinds f.kind)
    findings;
  findings

let batch_size = 256

let run cfg h11 =
  let stats =
    { inputs = 0; bytes = 0; elapsed = 0.; h11_batch_time = 0.; verdicts = Hashtbl.create 16; hits = Hashtbl.create 64;
      kinds = Hashtbl.create 16; findings = 0; printed = 0 }
  in
  let t0 = Unix.gettimeofday () in
  let next = ref cfg.first_index in
  let stop_at = if cfg.count > max_int - cfg.first_index then max_int else cfg.first_index + cfg.count in
  let last_progress = ref t0 in
  while !next < stop_at && Unix.gettimeofday () -. t0 < cfg.seconds do
    let n = min batch_size (stop_at - !next) in
    let cases = Array.init n (fun i -> Gen.case ~seed:cfg.seed ~index:(!next + i)) in
    let tb = Unix.gettimeofday () in
    let h11_results = H11.batch h11 (Array.map (fun (c : Gen.case) -> c.input) cases) in
    stats.h11_batch_time <- stats.h11_batch_time +. (Unix.gettimeofday () -. tb);
    Array.iteri
      (fun i c ->
        let index = !next + i in
        let fs = check_case h11 ~h11_result:h11_results.(i) stats c in
        List.iter
          (fun f ->
            if stats.printed < cfg.max_print then begin
              stats.printed <- stats.printed + 1;
              print_finding ~seed:cfg.seed ~index c f
            end)
          fs;
        stats.inputs <- stats.inputs + 1;
        stats.bytes <- stats.bytes + String.length c.input)
      cases;
    next := !next + n;
    let now = Unix.gettimeofday () in
    if cfg.progress && now -. !last_progress > 10. then begin
      last_progress := now;
      Printf.printf "... %d inputs, %.0f/s, %d findings\n%!" stats.inputs
        (float stats.inputs /. (now -. t0)) stats.findings
    end
  done;
  stats.elapsed <- Unix.gettimeofday () -. t0;
  stats

let sorted tbl = List.sort compare (Hashtbl.fold (fun k v acc -> (k, v) :: acc) tbl [])

let print_summary stats =
  Printf.printf "inputs fuzzed: %d (%d bytes) in %.1f s, %.0f inputs/s\n" stats.inputs stats.bytes
    stats.elapsed (float stats.inputs /. stats.elapsed);
  Printf.printf "of which waiting for h11's batched verdicts: %.1f s (%.0f inputs/s); the rest is \
                 generation, httpz and its self-checks, http_parser, and h11 on derived inputs\n"
    stats.h11_batch_time (float stats.inputs /. stats.h11_batch_time);
  Printf.printf "verdicts:\n";
  List.iter (fun (k, v) -> Printf.printf "  %-24s %d\n" k v) (sorted stats.verdicts);
  Printf.printf "documented disagreements by category:\n";
  List.iter (fun (k, v) -> Printf.printf "  %-48s %d\n" k v) (sorted stats.hits);
  Printf.printf "undocumented findings: %d\n" stats.findings;
  List.iter (fun (k, v) -> Printf.printf "  %-48s %d\n" k v) (sorted stats.kinds);
  flush stdout

let run_one h11 input =
  let hz, self = Diff.httpz_checked ~split:(String.length input / 2) input in
  let hp = Impl.http_parser input in
  let h1 = H11.check h11 input in
  Format.printf "@[<v>input: \"%s\"@,httpz: %a@,http_parser: %a@,h11: %a@]@." (Impl.escape input)
    Impl.pp_result hz Impl.pp_result hp Impl.pp_result h1;
  let hp_oracle = { Diff.name = Impl.Http_parser; run = Impl.http_parser } in
  let h11_oracle = { Diff.name = Impl.H11; run = H11.check h11 } in
  let r1 = Diff.compare hp_oracle ~hz_run:Impl.httpz input hz hp in
  let r2 = Diff.compare h11_oracle ~hz_run:Impl.httpz input hz h1 in
  List.iter (Printf.printf "documented: %s\n") (r1.hits @ r2.hits);
  let fs = self @ r1.findings @ r2.findings in
  List.iter
    (fun (f : Diff.finding) ->
      Printf.printf "FINDING %s\n  as: %s\n  %s\n" f.kind (shown f.input)
        (String.concat "\n  " (String.split_on_char '\n' f.detail)))
    fs;
  flush stdout;
  fs
