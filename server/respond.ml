open Httpz

(* Few entries at any time: one list per worker, scanned by slot. *)
let pending : (Ctx.t * Header_name.t * string) list ref = ref []

let add_header c name v = pending := (c, name, v) :: !pending

let drop_pending c =
  match !pending with
  | [] -> ()
  | l -> if List.exists (fun (c', _, _) -> c' == c) l then pending := List.filter (fun (c', _, _) -> c' != c) l

let write_pending c =
  match !pending with
  | [] -> ()
  | l ->
      let mine, others = List.partition (fun (c', _, _) -> c' == c) l in
      pending := others;
      List.iter (fun (_, name, v) -> Ctx.header c name v) (List.rev mine)

let start c status =
  Ctx.start c status;
  write_pending c

let typed c status content_type s =
  start c status;
  Ctx.header c Header_name.Content_type content_type;
  Ctx.body_string c s

let text c ?(status = Status.Ok) s = typed c status "text/plain; charset=utf-8" s
let html c ?(status = Status.Ok) s = typed c status "text/html; charset=utf-8" s
let json c ?(status = Status.Ok) s = typed c status "application/json" s

let empty c status =
  start c status;
  let code = Status.code status in
  Ctx.no_body c ~content_length:(if Status.forbids_content status || code < 200 then -1 else 0)

(* Through the server's error renderer when one is set ({!Errors}); its
   [start] writes the pending headers, found through this hook. *)
let () = Errors.set_pending_writer write_pending

let error c status =
  if Errors.active None then Errors.answer c status ~reason:(Status.reason status)
  else text c ~status (string_of_int (Status.code status) ^ " " ^ Status.reason status ^ "\n")

let error_reason c status reason =
  if Errors.active None then Errors.answer c status ~reason
  else text c ~status (string_of_int (Status.code status) ^ " " ^ Status.reason status ^ ": " ^ reason ^ "\n")

let has_prefix s p = String.length s >= String.length p && String.sub s 0 (String.length p) = p

let valid_location url =
  let n = String.length url in
  let clean = ref true in
  String.iter (fun ch -> if Char.code ch <= 0x20 || Char.code ch = 0x7f then clean := false) url;
  !clean && n > 0
  && ((url.[0] = '/' && not (n > 1 && (url.[1] = '/' || url.[1] = '\\')))
     || (let l = String.lowercase_ascii url in
         (has_prefix l "http://" && n > 7) || (has_prefix l "https://" && n > 8)))

let redirect c ?(status = Status.See_other) url =
  if not (Status.is_redirection status) then invalid_arg "Respond.redirect: not a 3xx status";
  if not (valid_location url) then invalid_arg "Respond.redirect: Location must be /path or an http(s) URL";
  start c status;
  Ctx.header c Header_name.Location url;
  Ctx.header c Header_name.Content_type "text/plain; charset=utf-8";
  Ctx.body_string c "redirecting\n"
