let minor_words_per_op ?(iters = 100_000) f =
  f ();
  let before = Gc.minor_words () in
  for _ = 1 to iters do f () done;
  let after = Gc.minor_words () in
  (after -. before) /. float_of_int iters

let zero_alloc name f =
  Alcotest.test_case name `Quick (fun () ->
      let w = minor_words_per_op f in
      Alcotest.(check (float 0.0)) (name ^ ": minor words per op") 0.0 w)

let seed () =
  match Sys.getenv_opt "QCHECK_SEED" with
  | Some s -> (match int_of_string_opt s with Some n -> n | None -> 42)
  | None -> 42

let qcheck (QCheck2.Test.Test cell) =
  let name = QCheck2.Test.get_name cell in
  Alcotest.test_case name `Quick (fun () ->
      let rand = Random.State.make [| seed () |] in
      QCheck2.Test.check_cell_exn ~rand cell)

let bigstring_at ?(garbage = '\r') ~off s =
  let n = String.length s in
  let b = Httpz.Bigstring.create (off + n + 64) in
  Bigarray.Array1.fill b garbage;
  Httpz.Bigstring.blit_from_string s ~src_off:0 b ~dst_off:off ~len:n;
  b

let read_file path =
  let ic = open_in_bin path in
  Fun.protect ~finally:(fun () -> close_in ic) (fun () ->
      really_input_string ic (in_channel_length ic))

let write_file path contents =
  let oc = open_out_bin path in
  Fun.protect ~finally:(fun () -> close_out oc) (fun () -> output_string oc contents)

let temp_dir prefix =
  let f = Filename.temp_file prefix "" in
  Sys.remove f;
  Unix.mkdir f 0o755;
  at_exit (fun () -> ignore (Sys.command ("rm -rf " ^ Filename.quote f)));
  f

let corpus_dir () =
  let rec up dir n =
    let cand = Filename.concat dir "bench/requests" in
    if Sys.file_exists (Filename.concat cand "medium.http") then cand
    else if n = 0 then failwith "bench/requests not found above the test directory"
    else up (Filename.dirname dir) (n - 1)
  in
  up (Sys.getcwd ()) 8

let vectors_dir () =
  let ok d = Sys.file_exists (Filename.concat d "request/get_minimal.http") in
  let rec up dir n =
    if ok dir then dir
    else if ok (Filename.concat dir "test/lib/http/vectors") then Filename.concat dir "test/lib/http/vectors"
    else if n = 0 then raise Not_found
    else up (Filename.dirname dir) (n - 1)
  in
  (* From the working directory (dune, scripts/test.sh), else from the
     executable's place in _build. *)
  try up (Sys.getcwd ()) 8
  with Not_found -> (
    let exe = Sys.executable_name in
    let exe = if Filename.is_relative exe then Filename.concat (Sys.getcwd ()) exe else exe in
    try up (Filename.dirname exe) 8
    with Not_found -> failwith "test/lib/http/vectors not found above the working directory or the executable")

let find_sub s sub =
  let n = String.length s and m = String.length sub in
  let rec go i = if i + m > n then -1 else if String.sub s i m = sub then i else go (i + 1) in
  go 0
