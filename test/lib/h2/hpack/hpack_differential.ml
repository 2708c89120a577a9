(* Differential tests against Python's hpack (Debian python3-hpack),
   driven through hpack_oracle.py. *)

open Httpz
open Hpack_common

(* ---------- differential against Python's hpack ---------- *)

let python =
  lazy
    (let can_import py =
       Sys.command (Filename.quote_command py [ "-c"; "import hpack" ] ~stdout:"/dev/null" ~stderr:"/dev/null") = 0
     in
     match List.find_opt can_import [ "/usr/bin/python3"; "python3" ] with
     | Some py -> py
     | None -> Alcotest.fail "no python3 can import hpack: install Debian's python3-hpack (scripts/deps.sh test)")

(* Runs the oracle once over all [lines]; its answer lines in order. *)
let run_oracle lines =
  let py = Lazy.force python in
  let script = Filename.temp_file "httpz_hpack_oracle" ".py" in
  let input = Filename.temp_file "httpz_hpack_in" ".txt" in
  let output = Filename.temp_file "httpz_hpack_out" ".txt" in
  Fun.protect
    ~finally:(fun () -> List.iter (fun f -> try Sys.remove f with Sys_error _ -> ()) [ script; input; output ])
    (fun () ->
      let write f s = let oc = open_out_bin f in output_string oc s; close_out oc in
      write script Oracle_script.source;
      write input (String.concat "" (List.map (fun l -> l ^ "\n") lines));
      let rc = Sys.command (Filename.quote_command py [ script; input; output ]) in
      if rc <> 0 then Alcotest.failf "the hpack oracle exited with %d" rc;
      let lines = String.split_on_char '\n' (S.read_file output) in
      List.filteri (fun i _ -> i < List.length lines - 1) lines)

(* Blocks that repeat fields, so dynamic-table references happen. *)
let gen_blocks =
  let open QCheck2.Gen in
  list_size (int_range 1 8) (pair gen_name gen_value) >>= fun pool ->
  let field = oneof [ oneofl pool; pair gen_name gen_value ] in
  list_size (int_range 1 4) (list_size (int_range 0 12) field)

let gen_case = QCheck2.Gen.(triple (oneofl [ 0; 64; 256; 4096 ]) bool gen_blocks)

let fields_line fields = String.concat " " (List.map (fun (n, v) -> to_hex n ^ ":" ^ to_hex v) fields)

let differential () =
  let rand = Random.State.make [| 42 |] in
  let cases = QCheck2.Gen.generate ~rand ~n:300 gen_case in
  (* Python encodes: one line per case; we encode: one line per case. *)
  let py_enc =
    List.map
      (fun (size, huff, blocks) ->
        Printf.sprintf "E %d %d %s" size (if huff then 1 else 0) (String.concat "|" (List.map fields_line blocks)))
      cases
  in
  let ours =
    List.map
      (fun (size, huff, blocks) ->
        let e = E.create ~huffman:huff ~table_size:size () in
        List.map
          (fun fields ->
            let b = Bigstring.create 65536 in
            let o = List.fold_left (fun o (n, v) -> E.field_s e b ~off:o n v) (E.start_block e b ~off:0) fields in
            Bigstring.sub_string b ~off:0 ~len:o)
          blocks)
      cases
  in
  let py_dec = List.map (fun blocks -> "D " ^ String.concat " " (List.map to_hex blocks)) ours in
  let answers = run_oracle (py_enc @ py_dec) in
  let n = List.length cases in
  Alcotest.(check int) "one answer per case" (2 * n) (List.length answers);
  List.iteri
    (fun i (size, huff, blocks) ->
      let encoded = List.nth answers i in
      (* python -> ours *)
      let d = D.create () in
      List.iter2
        (fun block_hex fields ->
          let got = decode d (hex block_hex) in
          if got <> Fields fields then
            Alcotest.failf "case %d (table %d, huffman %b): python's %s decodes to %s, not %s" i size huff
              block_hex (outcome_to_string got) (outcome_to_string (Fields fields)))
        (String.split_on_char ' ' encoded) blocks;
      (* ours -> python *)
      let expected = String.concat "|" (List.map fields_line blocks) in
      let answer = List.nth answers (n + i) in
      if answer <> expected then
        Alcotest.failf "case %d (table %d, huffman %b): python decodes our blocks %s to %s, not %s" i size
          huff (String.concat " " (List.map to_hex (List.nth ours i))) answer expected)
    cases


(* [:status] codes the static table lacks, through an encoder with a
   dynamic table, one block each: our decoder and Python's must read back
   exactly the code written, and a repeated code is one indexed byte. *)
let status_codes () =
  let codes = [ 201; 418; 201; 418; 503; 201 ] in
  let e = E.create ~table_size:4096 () in
  let blocks =
    List.map (fun code -> encode_with (fun b -> E.status e b ~off:(E.start_block e b ~off:0) code)) codes
  in
  let d = D.create () in
  List.iteri
    (fun i (code, block) ->
      let expected = [ (":status", string_of_int code) ] in
      Alcotest.check outcome (Printf.sprintf "block %d: our decoder" i) (Fields expected) (decode d block);
      let seen_before = List.exists (fun c -> c = code) (List.filteri (fun j _ -> j < i) codes) in
      if seen_before then begin
        Alcotest.(check int) (Printf.sprintf "block %d: %d again is one byte" i code) 1 (String.length block);
        Alcotest.(check bool) (Printf.sprintf "block %d: an index" i) true (Char.code block.[0] land 0x80 <> 0)
      end)
    (List.combine codes blocks);
  let expected = String.concat "|" (List.map (fun c -> fields_line [ (":status", string_of_int c) ]) codes) in
  match run_oracle [ "D " ^ String.concat " " (List.map to_hex blocks) ] with
  | [ answer ] -> Alcotest.(check string) "python decodes the statuses written" expected answer
  | l -> Alcotest.failf "%d oracle answers" (List.length l)

let tests =
  [ Alcotest.test_case "python hpack, both ways" `Quick differential;
    Alcotest.test_case "non-static statuses, dynamic table, python and ours" `Quick status_codes ]
