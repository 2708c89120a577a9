(* For multipart_ref_test.py: reads cases from stdin, each a line
   "HEX-BOUNDARY CUT,CUT,... LENGTH\n" followed by LENGTH body bytes, and prints
   one line per case: "ERROR <message>" or "OK" followed by one
   "name|filename-or-*|content-type|data" field per part, each in hex. *)
let hex s = String.concat "" (List.map (fun c -> Printf.sprintf "%02x" (Char.code c)) (List.of_seq (String.to_seq s)))

let () =
  set_binary_mode_in stdin true;
  try
    while true do
      let line = input_line stdin in
      match String.split_on_char ' ' line with
      | [ hexb; cuts; len ] ->
          let boundary = String.init (String.length hexb / 2) (fun i -> Char.chr (int_of_string ("0x" ^ String.sub hexb (2 * i) 2))) in
          let cuts = if cuts = "-" then [] else List.map int_of_string (String.split_on_char ',' cuts) in
          let body = really_input_string stdin (int_of_string len) in
          (match Mp_collect.run ~boundary ~cuts body with
           | Error e -> print_string ("ERROR " ^ Httpz.Multipart.error_to_string e)
           | Ok parts ->
               print_string "OK";
               List.iter
                 (fun (p : Mp_collect.part) ->
                   Printf.printf " %s|%s|%s|%s" (hex p.name)
                     (match p.filename with Some f -> hex f | None -> "*")
                     (hex p.content_type) (hex p.data))
                 parts);
          print_newline ()
      | _ -> failwith ("bad case line: " ^ line)
    done
  with End_of_file -> ()
