type t = {
  names : string array;
  values : string array;
  own_cache_control : bool;
  listing : bool;
  compress : bool;
  fallback : string;
}

let max_path = 1024

let make ~headers ~listing ~compress ~fallback =
  if fallback <> "" && (fallback.[0] <> '/' || String.length fallback > max_path) then
    Error (Printf.sprintf "fallback %S: give a path starting with '/' of at most %d bytes" fallback max_path)
  else
    Ok
      { names = Array.of_list (List.map fst headers);
        values = Array.of_list (List.map snd headers);
        own_cache_control = List.exists (fun (n, _) -> String.lowercase_ascii n = "cache-control") headers;
        listing; compress; fallback }
