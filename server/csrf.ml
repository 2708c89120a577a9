open Httpz

type t = { store : Session.store; field : string }

let session_key = Session.csrf_key
let header_name = "x-csrf-token"

let create ?(field = "_csrf") store = { store; field }
let field_name t = t.field

let token _t s =
  match Session.get s session_key with
  | Some v -> v
  | None ->
      let v = Token.generate 24 in
      Session.set s session_key v;
      v

let field t s = "<input type=\"hidden\" name=\"" ^ t.field ^ "\" value=\"" ^ token t s ^ "\">"

type failure = Cross_site | Foreign_origin | Missing_token | Bad_token

let failure_to_string = function
  | Cross_site -> "cross-site request"
  | Foreign_origin -> "request from another origin"
  | Missing_token -> "missing CSRF token"
  | Bad_token -> "invalid CSRF token"

let unsafe = function
  | Meth.Get | Meth.Head | Meth.Options | Meth.Trace -> false
  | Meth.Post | Meth.Put | Meth.Delete | Meth.Patch | Meth.Connect | Meth.Other -> true

(* The scheme://host[:port] part of an absolute URL. *)
let origin_of url =
  match String.index_opt url ':' with
  | Some i when i + 2 < String.length url && url.[i + 1] = '/' && url.[i + 2] = '/' -> (
      let rest = i + 3 in
      match String.index_from_opt url rest '/' with Some j -> String.sub url 0 j | None -> url)
  | _ -> url

let check_origin_values ~secure ~host ~origin ~referer ~fetch_site =
  let same o = String.lowercase_ascii o = String.lowercase_ascii ((if secure then "https://" else "http://") ^ host) in
  match fetch_site with
  | Some "cross-site" -> Error Cross_site
  | Some ("same-origin" | "same-site" | "none") | None -> (
      match (origin, referer) with
      | Some o, _ -> if o <> "null" && same o then Ok () else Error Foreign_origin
      | None, Some r -> if same (origin_of r) then Ok () else Error Foreign_origin
      | None, None -> Ok ())
  | Some _ -> Error Cross_site

let check_origin c =
  if not (unsafe (Req.meth c)) then Ok ()
  else
    check_origin_values ~secure:(Ctx.secure c)
      ~host:(match Req.header c "host" with Some h -> h | None -> "")
      ~origin:(Req.header c "origin") ~referer:(Req.header c "referer") ~fetch_site:(Req.header c "sec-fetch-site")

let sent_token t c =
  match Req.header c header_name with
  | Some v -> Some v
  | None -> if Ctx.body_ready c then Req.form_field c t.field else None

let compare_token sent s =
  match (sent, Session.get s session_key) with
  | None, _ | _, None -> Error Missing_token
  | Some a, Some b -> if Httpz_sys.Hmac.equal a b then Ok () else Error Bad_token

let check t c =
  match check_origin c with
  | Error _ as e -> e
  | Ok () when not (unsafe (Req.meth c)) -> Ok ()
  | Ok () -> (
      let sent = sent_token t c in
      compare_token sent (Session.load t.store c))

let check_session t c s =
  match check_origin c with
  | Error _ as e -> e
  | Ok () when not (unsafe (Req.meth c)) -> Ok ()
  | Ok () -> compare_token (sent_token t c) s

let reads_off_loop t = Session.reads_off_loop t.store

let check_then t c k =
  if not (reads_off_loop t) then k (check t c) c
  else
    match check_origin c with
    | Error _ as e -> k e c
    | Ok () when not (unsafe (Req.meth c)) -> k (Ok ()) c
    | Ok () ->
        (* The field is read now: the body stays in place until the
           handler answers, but the continuation runs after a wait. *)
        let sent = sent_token t c in
        Session.with_session t.store c (fun s c -> k (compare_token sent s) c)
