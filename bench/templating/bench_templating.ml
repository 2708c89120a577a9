(* One page, two ways: TyXML (typed: a <li> outside a list does not
   compile; every text node escaped by construction) and a Buffer with
   Html.escape_into (what the server library ships: nothing checks the
   markup, the author escapes each value). Both must print the same
   bytes; then each is timed and its allocation counted, median of 5
   rounds. Numbers from this program are what the README's templating
   paragraph quotes. *)

let notes = List.init 20 (fun i -> (string_of_int i, Printf.sprintf "note <%d> & \"more\"" i))

let tyxml_page query notes =
  let open Tyxml.Html in
  html
    (head (title (txt ("Search: " ^ query))) [ meta ~a:[ a_charset "utf-8" ] () ])
    (body
       [ h1 [ txt query ];
         ul (List.map (fun (id, t) -> li [ a ~a:[ a_href ("/notes/" ^ id) ] [ txt t ] ]) notes) ])

let with_tyxml q notes = Format.asprintf "%a" (Tyxml.Html.pp ()) (tyxml_page q notes)

let with_escape q notes =
  let module H = Httpz_server.Html in
  let b = Buffer.create 1024 in
  let add = Buffer.add_string b and esc s = H.escape_into b s in
  add "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\"><head><title>Search: ";
  esc q;
  add "</title><meta charset=\"utf-8\"/></head><body><h1>";
  esc q;
  add "</h1><ul>";
  List.iter
    (fun (id, t) ->
      add "<li><a href=\"/notes/";
      esc id;
      add "\">";
      esc t;
      add "</a></li>")
    notes;
  add "</ul></body></html>";
  Buffer.contents b

let measure name f =
  let n = 20_000 in
  let round () =
    let w0 = Gc.minor_words () and t0 = Unix.gettimeofday () in
    for _ = 1 to n do ignore (Sys.opaque_identity (f "<script>alert(1)</script>" notes)) done;
    ((Unix.gettimeofday () -. t0) *. 1e9 /. float n, (Gc.minor_words () -. w0) /. float n)
  in
  ignore (round ());
  let rs = List.sort compare (List.init 5 (fun _ -> round ())) in
  let ns, words = List.nth rs 2 in
  Printf.printf "%-22s %8.0f ns/page %8.0f words/page\n" name ns words;
  ns

let () =
  let a = with_tyxml "<script>alert(1)</script>" notes and b = with_escape "<script>alert(1)</script>" notes in
  (* TyXML escapes a double quote in text as &quot; and so does Html. *)
  if a <> b then begin
    Printf.printf "the two pages differ:\n%s\n%s\n" a b;
    exit 1
  end;
  Printf.printf "page: %d bytes, identical both ways\n" (String.length a);
  let t = measure "tyxml" with_tyxml in
  let e = measure "Html.escape_into" with_escape in
  Printf.printf "tyxml / escape: %.1fx\n" (t /. e)
