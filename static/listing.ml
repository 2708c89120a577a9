open Httpz_server

type entry = { name : string; is_dir : bool; size : int; mtime : int }

let format_time t =
  let tm = Unix.gmtime (float_of_int t) in
  Printf.sprintf "%04d-%02d-%02d %02d:%02d" (tm.tm_year + 1900) (tm.tm_mon + 1) tm.tm_mday
    tm.tm_hour tm.tm_min

let answer c ~dfd ~dir_path ~dotfiles ~max_entries ~open_entry =
  let n = String.length dir_path in
  match Unix.opendir ("/proc/self/fd/" ^ string_of_int dfd) with
  | exception Unix.Unix_error _ -> Pages.error_page c Forbidden
  | dir ->
    let st = Syscall.stat_create () in
    (* Read at most [max_entries] names, and one more to know it was cut:
       a directory of 100,000 entries must not hold the loop. *)
    let rec read acc k =
      if k > max_entries then (acc, true)
      else
        match Unix.readdir dir with
        | exception End_of_file -> (acc, false)
        | exception Unix.Unix_error _ -> (acc, false)
        | name ->
          if name = "" || name = "." || name = ".." then read acc k
          else if (not dotfiles) && name.[0] = '.' && name <> ".well-known" then read acc k
          else if k = max_entries then (acc, true)
          else
            let fd = open_entry (String.sub dir_path 1 (n - 1) ^ name) in
            if fd < 0 then read acc (k + 1)
            else begin
              let ok = Syscall.fstat fd st = 0 in
              ignore (Syscall.close fd);
              if not ok then read acc (k + 1)
              else
                read
                  ({ name; is_dir = Syscall.stat_kind st = Directory; size = Syscall.stat_size st;
                     mtime = Syscall.stat_mtime_s st } :: acc)
                  (k + 1)
            end
    in
    let entries, cut = Fun.protect ~finally:(fun () -> Unix.closedir dir) (fun () -> read [] 0) in
    let entries =
      List.sort
        (fun a b -> if a.is_dir <> b.is_dir then (if a.is_dir then -1 else 1) else compare a.name b.name)
        entries
    in
    let title = Escape.html_escape dir_path in
    let b = Buffer.create 4096 in
    Buffer.add_string b "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Index of ";
    Buffer.add_string b title;
    Buffer.add_string b "</title></head>\n<body><h1>Index of ";
    Buffer.add_string b title;
    Buffer.add_string b "</h1>\n<table>\n";
    if n > 1 then Buffer.add_string b "<tr><td><a href=\"../\">../</a></td><td></td><td></td></tr>\n";
    List.iter
      (fun e ->
        let shown = if e.is_dir then e.name ^ "/" else e.name in
        let href = Escape.encode_path e.name ^ if e.is_dir then "/" else "" in
        Printf.bprintf b "<tr><td><a href=\"%s\">%s</a></td><td>%s</td><td>%s</td></tr>\n"
          (Escape.html_escape href) (Escape.html_escape shown)
          (if e.is_dir then "-" else string_of_int e.size)
          (format_time e.mtime))
      entries;
    Buffer.add_string b "</table>\n";
    if cut then
      Printf.bprintf b "<p>This directory has more entries than the %d shown.</p>\n" max_entries;
    Buffer.add_string b "</body></html>\n";
    Ctx.start c Ok;
    Ctx.header c Content_type Pages.html_type;
    Ctx.header c Cache_control "no-cache";
    Ctx.body_string c (Buffer.contents b)

