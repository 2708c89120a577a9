let todos : (string, string) Hashtbl.t = Hashtbl.create 1024

let () =
  for i = 1 to 1000 do
    let id = string_of_int i in
    Hashtbl.replace todos id (Printf.sprintf {|{"id":%s,"title":"todo number %s","done":false}|} id id)
  done

let find id = Hashtbl.find_opt todos id
let not_found = {|{"error":"no such todo"}|}
