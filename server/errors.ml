(* Error paths only (see the .mli): allocating here is fine, except in
   [current] and [active], which the server's paths call to decide. *)

open Httpz

type t = Ctx.t -> Status.t -> reason:string -> unit

(* {1 What the next answer must carry} One answer at a time per worker:
   set by its caller just before [answer], cleared by it. *)

let req_name = ref Header_name.Other
let req_value = ref ""
let req_sname = ref ""  (* a field named by its spelling ([require_s]) *)
let req_svalue = ref ""
let req_int_name = ref Header_name.Other
let req_int = ref (-1)
let req_no_store = ref false

let require name v =
  req_name := name;
  req_value := v

let require_s name v =
  req_sname := name;
  req_svalue := v

let require_int name v =
  req_int_name := name;
  req_int := v

let require_no_store () = req_no_store := true

let clear () =
  req_name := Header_name.Other;
  req_value := "";
  req_sname := "";
  req_svalue := "";
  req_int := -1;
  req_no_store := false

let pending_writer : (Ctx.t -> unit) ref = ref ignore
let set_pending_writer f = pending_writer := f

let start c status =
  Ctx.start c status;
  !pending_writer c;
  if !req_name <> Header_name.Other then Ctx.header c !req_name !req_value;
  if !req_sname <> "" then Ctx.header_s c !req_sname !req_svalue;
  if !req_int >= 0 then Ctx.header_int c !req_int_name !req_int;
  if !req_no_store then Ctx.header c Header_name.Cache_control "no-store"

(* {1 Bodies} *)

let plain reason status = reason = Status.reason status

let text_body status reason =
  let head = string_of_int (Status.code status) ^ " " ^ Status.reason status in
  if plain reason status then head ^ "\n" else head ^ ": " ^ reason ^ "\n"

let html_escape = Html.escape

let html_body status reason =
  let title = string_of_int (Status.code status) ^ " " ^ html_escape (Status.reason status) in
  "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" ^ title ^ "</title></head><body><h1>" ^ title
  ^ "</h1>"
  ^ (if plain reason status then "" else "<p>" ^ html_escape reason ^ "</p>")
  ^ "</body></html>\n"

let utf8 s =
  let st = ref Utf8.accept in
  String.iter (fun ch -> if not (Utf8.is_rejected !st) then st := Utf8.step !st ch) s;
  Utf8.is_complete !st

let json_string s =
  let b = Buffer.create (String.length s + 8) in
  let raw = utf8 s in
  Buffer.add_char b '"';
  String.iter
    (fun ch ->
      match ch with
      | '"' -> Buffer.add_string b "\\\""
      | '\\' -> Buffer.add_string b "\\\\"
      | '\n' -> Buffer.add_string b "\\n"
      | '\r' -> Buffer.add_string b "\\r"
      | '\t' -> Buffer.add_string b "\\t"
      | ch when Char.code ch < 0x20 || Char.code ch = 0x7f || (Char.code ch > 0x7f && not raw) ->
          Buffer.add_string b (Printf.sprintf "\\u%04x" (Char.code ch))
      | ch -> Buffer.add_char b ch)
    s;
  Buffer.add_char b '"';
  Buffer.contents b

let json_body status reason =
  Printf.sprintf "{\"error\":{\"status\":%d,\"message\":%s}}\n" (Status.code status) (json_string reason)

let typed ctype body c status ~reason =
  start c status;
  Ctx.header c Header_name.Content_type ctype;
  Ctx.body_string c (body status reason)

let text = typed "text/plain; charset=utf-8" text_body
let html = typed "text/html; charset=utf-8" html_body
let json = typed "application/json" json_body

(* {1 The server's} *)

let server : t option ref = ref None
let current () = !server
let active = function Some _ -> true | None -> ( match !server with Some _ -> true | None -> false)

let complete c = (Ctx.to_conn c).Slot.resp = Slot.Done

let left c =
  let s = Ctx.to_conn c in
  s.Slot.sent > 0 || s.Slot.flushed

(* A renderer's failure is the application's bug, not the client's: the
   built-in answer replaces what it began, unless some of it left. *)
let fall_back c status ~reason why =
  Log.error "error renderer failed for %d (%s): the built-in text answer is sent instead"
    (Status.code status) why;
  Slot.reset_response (Ctx.to_conn c);
  text c status ~reason

(* A renderer that answers through Respond.error (or anything that comes
   back here) gets the text answer, not itself again. *)
let rendering = ref false

let answer ?errors c status ~reason =
  if (Ctx.to_conn c).Slot.resp <> Slot.Idle then begin
    (* A response already begun (or complete): not the renderer's to
       answer; the built-in one raises as Ctx.start does there
       (Answered_twice after a complete one), and nothing is wiped. *)
    clear ();
    text c status ~reason
  end
  else
  let r =
    if !rendering then text
    else match errors with Some r -> r | None -> ( match !server with Some r -> r | None -> text)
  in
  let outer = not !rendering in
  rendering := true;
  Fun.protect ~finally:(fun () -> if outer then begin rendering := false; clear () end) (fun () ->
      match r c status ~reason with
      | () ->
          if not (complete c) then
            if left c then failwith "Errors.answer: the renderer did not complete its answer"
            else fall_back c status ~reason "it returned without a complete answer"
      | exception e ->
          if complete c then
            Log.error "error renderer raised %s after answering %d" (Printexc.to_string e) (Status.code status)
          else if left c then raise e
          else fall_back c status ~reason ("it raised " ^ Printexc.to_string e))

(* Ctx.offload's 503 comes before this module: a hook. *)
let busy c =
  require_int Header_name.Retry_after 1;
  answer c Status.Service_unavailable ~reason:"The server is busy: try again in a moment."

let set r =
  server := r;
  Ctx.busy_hook := (match r with Some _ -> Some busy | None -> None)
