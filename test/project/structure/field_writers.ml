(* Which modules assign the mutable fields of a record type, read from the
   typed trees dune keeps (.cmt): every [e.f <- v] whose label belongs to
   the type counts, whatever the receiver is called, and record updates
   through a [with] or a construction do not (they make a new record).
   Usage: field_writers.exe TYPE DIR...
   TYPE is a qualified record type as its module names it ("Slot.t",
   "Loop_state.t"); each DIR is searched for .cmt files. Prints one line per
   module that assigns, then "M modules assign TYPE's fields, N assignments". *)

let usage () =
  prerr_endline "usage: field_writers.exe Module.type DIR...";
  exit 2

(* "Httpz_server__Slot" -> "Slot": dune's mangled unit names. *)
let unit_name modname =
  let n = String.length modname in
  let rec last_sep i = if i < 1 then None else if modname.[i] = '_' && modname.[i - 1] = '_' then Some i else last_sep (i - 1) in
  match last_sep (n - 1) with Some i -> String.sub modname (i + 1) (n - i - 1) | None -> modname

(* The label's record type, as "Unit.type" whatever the path's prefix. *)
let record_of (lbl : Types.label_description) ~current =
  match (Btype.repr lbl.lbl_res).desc with
  | Types.Tconstr (p, _, _) -> (
      match p with
      | Path.Pident id -> Some (current ^ "." ^ Ident.name id)
      | Path.Pdot (m, name) -> Some (unit_name (Path.last m) ^ "." ^ name)
      | Path.Papply _ -> None)
  | _ -> None

let count_file ~target path =
  match Cmt_format.read_cmt path with
  | exception _ -> (None, 0)
  | cmt -> (
      let current = unit_name cmt.cmt_modname in
      match cmt.cmt_annots with
      | Cmt_format.Implementation str ->
          let n = ref 0 in
          let expr self (e : Typedtree.expression) =
            (match e.exp_desc with
             | Typedtree.Texp_setfield (_, _, lbl, _) ->
                 if record_of lbl ~current = Some target then incr n
             | _ -> ());
            Tast_iterator.default_iterator.expr self e
          in
          let it = { Tast_iterator.default_iterator with expr } in
          it.structure it str;
          (Some current, !n)
      | _ -> (None, 0))

let rec cmt_files dir =
  Array.fold_left
    (fun acc name ->
      let p = Filename.concat dir name in
      if Sys.is_directory p then cmt_files p @ acc
      else if Filename.check_suffix name ".cmt" then p :: acc
      else acc)
    [] (Sys.readdir dir)

let () =
  if Array.length Sys.argv < 3 then usage ();
  let target = Sys.argv.(1) in
  let files = List.concat_map cmt_files (List.tl (List.tl (Array.to_list Sys.argv))) in
  let rows =
    List.filter_map
      (fun f -> match count_file ~target f with Some m, n when n > 0 -> Some (m, n) | _ -> None)
      files
    |> List.sort_uniq compare
  in
  List.iter (fun (m, n) -> Printf.printf "%-24s %4d\n" m n) rows;
  Printf.printf "%d modules assign %s's fields, %d assignments\n" (List.length rows) target
    (List.fold_left (fun a (_, n) -> a + n) 0 rows)
