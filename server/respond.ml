open Httpz

(* A queued header: [sname] is the spelling when [name] is [Other];
   [g] names its request (the slot's [gen]): one queued for a request
   that ended without writing it (a handler that raised after
   Session.commit, or answered through Ctx) is never written into a later
   request's answer on the same slot, which may be another client's. *)
type queued = { c : Ctx.t; g : int; name : Header_name.t; sname : string; v : string }

(* Few entries at any time: one list per worker, scanned by slot. An
   entry whose request has ended (its slot's [gen] moved on) is stale:
   never written, and dropped at the next [add] or [write_pending] of
   any request, so the list holds no more than the requests in progress
   queued (an HTTP/2 exchange the pool let go never comes back to drop
   its own). *)
let pending : queued list ref = ref []

let gen c = (Ctx.to_conn c).Slot.gen
let live q = q.g = gen q.c

let rec all_live = function [] -> true | q :: tl -> live q && all_live tl
let purge l = if all_live l then l else List.filter live l

let add q = pending := q :: purge !pending
let add_header c name v = add { c; g = gen c; name; sname = ""; v }

let add_header_s c sname v =
  match Header_name.of_string sname with
  | Header_name.Other -> add { c; g = gen c; name = Header_name.Other; sname; v }
  | name -> add_header c name v

let rec has c = function [] -> false | q :: tl -> q.c == c || has c tl

let drop_pending c =
  match !pending with
  | [] -> ()
  | l -> if has c l then pending := List.filter (fun q -> q.c != c) l

let write_queued q = if q.name = Header_name.Other then Ctx.header_s q.c q.sname q.v else Ctx.header q.c q.name q.v

let write_pending c =
  match !pending with
  | [] -> ()
  | l ->
      if has c l then begin
        let mine, others = List.partition (fun q -> q.c == c) l in
        pending := purge others;
        let g = gen c in
        List.iter (fun q -> if q.g = g then write_queued q) (List.rev mine)
      end
      else pending := purge l

(* The list is newest first: the last match is the first queued. *)
let rec find_queued c name sname acc = function
  | [] -> acc
  | q :: tl ->
      let hit = q.c == c && q.g = gen c && q.name = name && (name <> Header_name.Other || String.lowercase_ascii q.sname = sname) in
      find_queued c name sname (if hit then Some q.v else acc) tl

let pending_header c name = match !pending with [] -> None | l -> find_queued c name "" None l

let pending_header_s c sname =
  match Header_name.of_string sname with
  | Header_name.Other -> (match !pending with [] -> None | l -> find_queued c Header_name.Other (String.lowercase_ascii sname) None l)
  | name -> pending_header c name

let start c status =
  Ctx.start c status;
  write_pending c

let rec write_headers c = function
  | [] -> ()
  | (name, v) :: tl ->
      Ctx.header c name v;
      write_headers c tl

let rec has_name name = function [] -> false | (n, _) :: tl -> n = name || has_name name tl

(* A [Content-Type] among [headers] replaces the function's own. *)
let head c status headers content_type =
  start c status;
  match headers with
  | None -> Ctx.header c Header_name.Content_type content_type
  | Some l ->
      if not (has_name Header_name.Content_type l) then Ctx.header c Header_name.Content_type content_type;
      write_headers c l

let typed c status headers content_type s =
  head c status headers content_type;
  Ctx.body_string c s

let text c ?(status = Status.Ok) ?headers s = typed c status headers "text/plain; charset=utf-8" s
let html c ?(status = Status.Ok) ?headers s = typed c status headers "text/html; charset=utf-8" s
let json c ?(status = Status.Ok) ?headers s = typed c status headers "application/json" s

let empty c ?headers status =
  start c status;
  (match headers with None -> () | Some l -> write_headers c l);
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

let redirect c ?(status = Status.See_other) ?headers url =
  if not (Status.is_redirection status) then invalid_arg "Respond.redirect: not a 3xx status";
  if not (valid_location url) then invalid_arg "Respond.redirect: Location must be /path or an http(s) URL";
  start c status;
  Ctx.header c Header_name.Location url;
  (match headers with None -> () | Some l -> write_headers c l);
  Ctx.header c Header_name.Content_type "text/plain; charset=utf-8";
  Ctx.body_string c "redirecting\n"
