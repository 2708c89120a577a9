open Httpz
open Httpz_server
module B = Bigstring

type entry = { name : string; is_dir : bool; size : int; mtime : int }

let format_time t =
  let tm = Unix.gmtime (float_of_int t) in
  Printf.sprintf "%04d-%02d-%02d %02d:%02d" (tm.tm_year + 1900) (tm.tm_mon + 1) tm.tm_mday
    tm.tm_hour tm.tm_min

let answer c ~root_fd ~dfd ~dir_path ~dotfiles ~follow_symlinks =
  let n = String.length dir_path in
  match Sys.readdir ("/proc/self/fd/" ^ string_of_int dfd) with
  | exception Sys_error _ -> Pages.error_page c Forbidden
  | names ->
    let st = Syscall.stat_create () in
    let entries =
      Array.fold_left
        (fun acc name ->
          if name = "" || name = "." || name = ".." then acc
          else if (not dotfiles) && name.[0] = '.' && name <> ".well-known" then acc
          else begin
            let rel = String.sub dir_path 1 (n - 1) ^ name in
            let rb = B.of_string rel in
            let fd =
              Syscall.openat2_beneath root_fd rb 0 (String.length rel)
                ~no_symlinks:(not follow_symlinks)
            in
            if fd < 0 then acc
            else begin
              let ok = Syscall.fstat fd st = 0 in
              ignore (Syscall.close fd);
              if not ok then acc
              else
                { name; is_dir = Syscall.stat_kind st = Directory; size = Syscall.stat_size st;
                  mtime = Syscall.stat_mtime_s st } :: acc
            end
          end)
        [] names
    in
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
    Buffer.add_string b "</table>\n</body></html>\n";
    Ctx.start c Ok;
    Ctx.header c Content_type Pages.html_type;
    Ctx.header c Cache_control "no-cache";
    Ctx.body_string c (Buffer.contents b)

