open Httpz

type entry = { run : Ctx.t -> unit; form : bool; pattern : string }
type router = { r : entry Router.t; mutable forms : bool; mutable not_found : (Ctx.t -> unit) option }

let router () = { r = Router.create (); forms = false; not_found = None }
let add t meth pattern h = Router.add t.r meth pattern { run = h; form = false; pattern }
let get t = add t Meth.Get
let post t = add t Meth.Post
let put t = add t Meth.Put
let patch t = add t Meth.Patch
let delete t = add t Meth.Delete

let form t meth pattern h =
  t.forms <- true;
  Router.add t.r meth pattern { run = h; form = true; pattern }

let post_form t = form t Meth.Post
let mount t prefix h = Router.mount t.r prefix { run = h; form = false; pattern = prefix }

let not_found t h = t.not_found <- Some h

let mount_router t prefix sub =
  if sub.forms then t.forms <- true;
  Router.mount_router t.r prefix sub.r

type t = {
  compiled : entry Router.compiled;
  m : Router.Match.t;
  target : Target.t;
  csrf : Csrf.t option;
  slash_redirect : bool;
  errors : Errors.t option;  (** this router's error renderer, ahead of the server's *)
  fallback : (Ctx.t -> unit) option;  (** {!not_found}'s handler *)
  allow : Bigstring.t;  (** an [Allow] value is written here *)
  scratch : Bigstring.t;  (** parameters are decoded here to check them *)
  mutable serving : Obj.t;  (** the Ctx.t whose handler ran last, or [idle] *)
  mutable running : bool;  (** [serving]'s handler runs now *)
}

let idle = Obj.repr 0

let compile ?csrf ?(slash_redirect = true) ?errors r =
  if r.forms && csrf = None then invalid_arg "Route.compile: form routes need ~csrf";
  let compiled = Router.compile r.r in
  { compiled; m = Router.Match.create ~max_params:(Router.max_params compiled); target = Target.create (); csrf;
    slash_redirect; errors; fallback = r.not_found; allow = Bigstring.create 64; scratch = Bigstring.create 4096; serving = idle; running = false }

(* The router whose handler runs now: a worker runs one handler call at a
   time, so one slot is enough. *)
let current = ref (compile (router ()))

let find t meth buf target =
  match Target.split t.target buf target with
  | Target.Origin | Target.Absolute -> Router.find t.compiled t.m meth buf ~path:(Target.path t.target)
  | Target.Asterisk | Target.Error -> Router.Not_found

(* An error answer of this router: through its renderer or the server's
   when either is set, else the text answers it always gave. *)
let fail t c status reason =
  if Errors.active t.errors then Errors.answer ?errors:t.errors c status ~reason
  else if reason = Status.reason status then Respond.error c status
  else Respond.error_reason c status reason

let write_allow t c mask =
  let n = Router.write_allow mask t.allow ~off:0 in
  Ctx.header_bytes c Header_name.Allow t.allow ~off:0 ~len:n

let params_decode t buf =
  let ok = ref true in
  for i = 0 to Router.param_count t.m - 1 do
    if Router.decode_param buf (Router.param t.m i) ~dst:t.scratch ~dst_off:0 < 0 then ok := false
  done;
  !ok

let other_slash t buf =
  let p = Target.path t.target in
  let raw = Span.to_string buf p in
  let n = String.length raw in
  if n >= 2 && raw.[1] = '/' then None
  else
    let other = if n > 1 && raw.[n - 1] = '/' then String.sub raw 0 (n - 1) else raw ^ "/" in
    if Target.has_query t.target then Some (other ^ "?" ^ Span.to_string buf (Target.query t.target)) else Some other

(* A mounted handler may be another router: the outer one is current again
   when it returns. Pointer fields are written only when they change (a
   keep-alive connection served by one router changes neither): each write
   is a write barrier. *)
let run t c e =
  let outer = !current in
  if t.serving != Obj.repr c then t.serving <- Obj.repr c;
  if outer != t then current := t;
  t.running <- true;
  Ctx.set_route_pattern c e.pattern;
  match e.run c with
  | () ->
      t.running <- false;
      if outer != t then current := outer
  | exception ex ->
      t.running <- false;
      if outer != t then current := outer;
      raise ex

let every_method = Router.meth_bit Meth.Get lor Router.meth_bit Meth.Head lor Router.meth_bit Meth.Post
  lor Router.meth_bit Meth.Put lor Router.meth_bit Meth.Delete lor Router.meth_bit Meth.Patch
  lor Router.meth_bit Meth.Options

(* [checked]: the form's CSRF check passed (after a session read off the
   loop, the request is matched again: the match state is the worker's,
   and other requests ran meanwhile). *)
let rec found t c ~checked =
  let e = Router.payload t.compiled t.m in
  if not (params_decode t (Ctx.buffer c)) then fail t c Status.Bad_request "malformed path parameter"
  else if not e.form then run t c e
  else if not (Ctx.body_ready c) then Ctx.await_body c
  else
    match t.csrf with
    | None -> run t c e
    | Some _ when checked -> run t c e
    | Some csrf when not (Csrf.reads_off_loop csrf) -> (
        match Csrf.check csrf c with
        | Ok () -> run t c e
        | Error f -> fail t c Status.Forbidden (Csrf.failure_to_string f))
    | Some csrf ->
        Csrf.check_then csrf c (fun r c ->
            match r with
            | Ok () -> dispatch t c ~checked:true
            | Error f -> fail t c Status.Forbidden (Csrf.failure_to_string f))


and dispatch t c ~checked =
  let buf = Ctx.buffer c and req = Ctx.request c in
  let meth = Request.meth req in
  match Target.split t.target buf (Request.target req) with
  | Target.Error -> fail t c Status.Bad_request (Status.reason Status.Bad_request)
  | Target.Asterisk ->
      if meth = Meth.Options then begin
        Respond.start c Status.No_content;
        write_allow t c every_method;
        Ctx.no_body c ~content_length:(-1)
      end
      else fail t c Status.Bad_request (Status.reason Status.Bad_request)
  | Target.Origin | Target.Absolute -> (
      match Router.find t.compiled t.m meth buf ~path:(Target.path t.target) with
      | Router.Found | Router.Head_by_get -> found t c ~checked
      | Router.Auto_options ->
          Respond.start c Status.No_content;
          write_allow t c (Router.allow t.m);
          Ctx.no_body c ~content_length:(-1)
      | Router.Method_not_allowed when Errors.active t.errors ->
          let n = Router.write_allow (Router.allow t.m) t.allow ~off:0 in
          Errors.require Header_name.Allow (Bigstring.sub_string t.allow ~off:0 ~len:n);
          Errors.answer ?errors:t.errors c Status.Method_not_allowed ~reason:(Status.reason Status.Method_not_allowed)
      | Router.Method_not_allowed ->
          Respond.start c Status.Method_not_allowed;
          write_allow t c (Router.allow t.m);
          Ctx.header c Header_name.Content_type "text/plain; charset=utf-8";
          Ctx.body_string c "405 Method Not Allowed\n"
      | Router.Not_found -> (
          match if t.slash_redirect && Router.slash_redirect t.compiled t.m buf then other_slash t buf else None with
          | Some loc -> Respond.redirect c ~status:Status.Permanent_redirect loc
          | None -> (
              match t.fallback with
              | Some h -> h c
              | None -> fail t c Status.Not_found (Status.reason Status.Not_found))))

(* Headers queued before the router ran (a middleware's [before]) are
   this request's: kept. Those of an earlier request on the slot are
   never written (Respond keys them by request). *)
let handler t c = dispatch t c ~checked:false

let serving name c =
  let t = !current in
  if not t.running || t.serving != Obj.repr c then invalid_arg (name ^ ": not in a route handler's synchronous call");
  t

let param_span c name =
  let t = serving "Route.param" c in
  let i = Router.param_index t.compiled t.m name in
  if i < 0 then invalid_arg ("Route.param: the route has no parameter " ^ name);
  Router.param t.m i

let param c name =
  let s = param_span c name in
  match Router.param_string (Ctx.buffer c) s with
  | Ok v -> v
  | Error _ -> invalid_arg "Route.param: undecodable (checked before the handler ran)"

let remainder c = Router.remainder (serving "Route.remainder" c).m

let prefix_length c =
  let t = !current in
  if t.running && t.serving == Obj.repr c then Router.prefix_length t.m else 0
