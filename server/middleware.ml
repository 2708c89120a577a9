(* Wrappers built at start-up: every closure a request meets (the wrapper
   itself, its hooks) is made once, when the chain is composed, so a
   request through a chain allocates only what a middleware documents. *)

open Httpz

type handler = Ctx.t -> unit
type t = handler -> handler

let identity h = h
let compose l = List.fold_right (fun m acc h -> m (acc h)) l identity
let apply l h = compose l h

let make ?before ?head ?complete () next =
  match before, head, complete with
  | None, None, None -> next
  | _ ->
      fun c ->
        (match head with Some f -> Ctx.on_head c f | None -> ());
        (match complete with Some f -> Ctx.on_complete c f | None -> ());
        match before with
        | Some f -> if f c then next c
        | None -> next c

(* The index of the first field [name] of the request (any case), or -1. *)
let field c name = Request.find_string (Ctx.request c) (Ctx.buffer c) name

module Cors = struct
  type origins = Any | Origins of string list | Allow_if of (string -> bool)

  type config = {
    origins : origins;
    methods : Meth.t list;
    headers : string list;
    expose : string list;
    credentials : bool;
    max_age : int;
  }

  let default =
    {
      origins = Origins [];
      methods = [ Meth.Get; Meth.Head; Meth.Post ];
      headers = [];
      expose = [];
      credentials = false;
      max_age = 600;
    }

  let forbidden_reason = "CORS: origin not allowed"

  (* A function of its own, not a local closure: 0 words per request. *)
  let rec listed origins buf v k =
    k < Array.length origins && (Span.equal_caseless buf v (Array.unsafe_get origins k) || listed origins buf v (k + 1))

  let list l = String.concat ", " l

  let check_field name v =
    if v <> "" && not (Response.is_field_value v) then
      invalid_arg ("Middleware.Cors: not a field value for " ^ name ^ ": " ^ v)

  let middleware cfg =
    let origins = match cfg.origins with Origins l -> Array.of_list l | Any | Allow_if _ -> [||] in
    Array.iter (check_field "an origin") origins;
    let methods = list (List.map Meth.to_string cfg.methods) in
    let headers = list cfg.headers in
    let any_header = List.mem "*" cfg.headers in
    let expose = list cfg.expose in
    let max_age = string_of_int cfg.max_age in
    (* Every origin with credentials would let any site read a user's
       answers (the origin echoed with Allow-Credentials): refused; a
       predicate says which origins are trusted with them. *)
    if cfg.credentials && (match cfg.origins with Any -> true | Origins _ | Allow_if _ -> false) then
      invalid_arg "Cors: credentials with every origin would let any site read the user's answers: list the origins";
    check_field "methods" methods;
    check_field "headers" headers;
    check_field "expose" expose;
    (* "*" is refused by browsers on a request with credentials: the
       origin is echoed then, and the answer varies by it. *)
    let star = (match cfg.origins with Any -> true | Origins _ | Allow_if _ -> false) && not cfg.credentials in
    let allowed c i =
      let buf = Ctx.buffer c and v = Request.header_value (Ctx.request c) i in
      match cfg.origins with
      | Any -> true
      | Origins _ -> listed origins buf v 0
      | Allow_if f -> f (Span.to_string buf v)
    in
    let allow_origin c i =
      if star then Ctx.header c Header_name.Access_control_allow_origin "*"
      else begin
        Ctx.header_span c Header_name.Access_control_allow_origin (Ctx.buffer c)
          (Request.header_value (Ctx.request c) i);
        Ctx.header c Header_name.Vary "Origin"
      end;
      if cfg.credentials then Ctx.header_s c "Access-Control-Allow-Credentials" "true"
    in
    (* An actual (not preflight) request: the answer's fields, decided
       when the head ends, from the request's Origin. *)
    let actual c =
      let i = Request.find (Ctx.request c) Header_name.Origin in
      if i >= 0 && allowed c i then begin
        allow_origin c i;
        if expose <> "" then Ctx.header_s c "Access-Control-Expose-Headers" expose
      end
      else if not star then Ctx.header c Header_name.Vary "Origin"
    in
    let preflight c i =
      if not (allowed c i) then Respond.error_reason c Status.Forbidden forbidden_reason
      else begin
        Respond.start c Status.No_content;
        allow_origin c i;
        if methods <> "" then Ctx.header_s c "Access-Control-Allow-Methods" methods;
        let h = field c "access-control-request-headers" in
        if any_header then begin
          if h >= 0 then
            (* The requested list back (allocates: preflights only), as
               "*" is not honoured on a request with credentials. *)
            Ctx.header_s c "Access-Control-Allow-Headers"
              (Span.to_string (Ctx.buffer c) (Request.header_value (Ctx.request c) h))
        end
        else if headers <> "" then Ctx.header_s c "Access-Control-Allow-Headers" headers;
        if cfg.max_age >= 0 then Ctx.header_s c "Access-Control-Max-Age" max_age;
        Ctx.header_s c "Vary" "Access-Control-Request-Method, Access-Control-Request-Headers";
        Ctx.no_body c ~content_length:(-1)
      end
    in
    fun next c ->
      let req = Ctx.request c in
      let i = if Request.meth req = Meth.Options then Request.find req Header_name.Origin else -1 in
      if i >= 0 && field c "access-control-request-method" >= 0 then preflight c i
      else begin
        Ctx.on_head c actual;
        next c
      end
end

module Security_headers = struct
  type config = {
    hsts : string option;
    content_type_options : bool;
    frame_options : string option;
    content_security_policy : string option;
    referrer_policy : string option;
    others : (string * string) list;
  }

  let default =
    {
      hsts = Some "max-age=31536000; includeSubDomains";
      (* The server's default [headers] send it already. *)
      content_type_options = false;
      frame_options = Some "DENY";
      content_security_policy = Some "frame-ancestors 'none'";
      referrer_policy = Some "strict-origin-when-cross-origin";
      others = [];
    }

  (* Two sets made once, for plain and TLS connections: a response copies
     one (Ctx.fields), already checked and HPACK-encoded. *)
  let fields cfg ~tls =
    let p = Prepared_fields.create () in
    let opt name v = match v with Some v -> Prepared_fields.add p name v | None -> () in
    if tls then opt Header_name.Strict_transport_security cfg.hsts;
    if cfg.content_type_options then Prepared_fields.add p Header_name.X_content_type_options "nosniff";
    opt Header_name.X_frame_options cfg.frame_options;
    opt Header_name.Content_security_policy cfg.content_security_policy;
    (match cfg.referrer_policy with Some v -> Prepared_fields.add_s p "Referrer-Policy" v | None -> ());
    List.iter (fun (n, v) -> Prepared_fields.add_s p n v) cfg.others;
    p

  let middleware cfg =
    let plain = fields cfg ~tls:false and tls = fields cfg ~tls:true in
    let head c = Ctx.fields c (if Ctx.secure c then tls else plain) in
    fun next c ->
      Ctx.on_head c head;
      next c
end

module Request_id = struct
  let default_max_length = 128

  let safe ch =
    match ch with
    | 'A' .. 'Z' | 'a' .. 'z' | '0' .. '9' | '-' | '_' | '.' | ':' | '+' | '/' | '=' | '@' -> true
    | _ -> false

  let rec all_safe buf off n k = k >= n || (safe (Bigstring.unsafe_get buf (off + k)) && all_safe buf off n (k + 1))

  let valid_span buf v ~max_length =
    let n = Span.len v in
    n > 0 && n <= max_length
    &&
    all_safe buf (Span.off v) n 0

  let valid ?(max_length = default_max_length) s =
    let n = String.length s in
    n > 0 && n <= max_length && String.for_all safe s

  (* Made at the first request of each process: workers fork before they
     serve, so each has a prefix of its own (from the kernel's entropy)
     and its ids never collide with another worker's. *)
  let prefix = ref ""
  let counter = ref 0

  let hex = "0123456789abcdef"

  let generate () =
    if !prefix = "" then prefix := Token.generate 9;
    incr counter;
    let n = !counter in
    let digits = ref 1 in
    while n lsr (4 * !digits) <> 0 do incr digits done;
    let p = !prefix in
    let lp = String.length p in
    let b = Bytes.create (lp + 1 + !digits) in
    Bytes.blit_string p 0 b 0 lp;
    Bytes.set b lp '-';
    for k = 0 to !digits - 1 do
      Bytes.set b (lp + 1 + k) hex.[(n lsr (4 * (!digits - 1 - k))) land 15]
    done;
    Bytes.unsafe_to_string b

  let head c =
    let id = Ctx.request_id c in
    if id <> "" then Ctx.header c Header_name.X_request_id id

  let middleware ?(trust_incoming = true) ?(max_length = default_max_length) () =
    fun next c ->
      (* Called again after Ctx.await_body: the id stays. *)
      if Ctx.request_id c = "" then begin
        let i = if trust_incoming then Request.find (Ctx.request c) Header_name.X_request_id else -1 in
        let buf = Ctx.buffer c in
        let id =
          if i >= 0 && valid_span buf (Request.header_value (Ctx.request c) i) ~max_length then
            Span.to_string buf (Request.header_value (Ctx.request c) i)
          else generate ()
        in
        Ctx.set_request_id c id
      end;
      Ctx.on_head c head;
      next c

  let get = Ctx.request_id
end

module Route_metrics = struct
  type row = {
    route : string;
    by_class : int array;
    incomplete : int;
    count : int;
    sum_seconds : float;
    buckets : (float * int) array;
  }

  type entry = {
    e_route : string;
    e_by_class : int array;  (* [0]: no response; [k]: kxx *)
    mutable e_incomplete : int;
    mutable e_count : int;
    mutable e_sum_ns : int;
    e_buckets : int array;  (* per bucket, not cumulative; last: +Inf *)
  }

  type t = {
    bounds : float array;
    bounds_ns : int array;
    table : (string, entry) Hashtbl.t;
    mutable last : entry;  (* the entry of the last route seen: most requests hit it again *)
    name : string;
  }

  let default_buckets = [| 0.001; 0.0025; 0.005; 0.01; 0.025; 0.05; 0.1; 0.25; 0.5; 1.; 2.5; 5.; 10. |]

  let new_entry nbounds route =
    {
      e_route = route;
      e_by_class = Array.make 6 0;
      e_incomplete = 0;
      e_count = 0;
      e_sum_ns = 0;
      e_buckets = Array.make (nbounds + 1) 0;
    }

  let valid_name s =
    s <> ""
    && String.for_all (function 'a' .. 'z' | 'A' .. 'Z' | '0' .. '9' | '_' | ':' -> true | _ -> false) s
    && not (match s.[0] with '0' .. '9' -> true | _ -> false)

  let create ?(buckets = default_buckets) ?(name = "httpz_route") () =
    if not (valid_name name) then invalid_arg ("Middleware.Route_metrics.create: not a metric name: " ^ name);
    let bounds = Array.copy buckets in
    Array.iteri
      (fun i b -> if not (b > 0.) || (i > 0 && b <= bounds.(i - 1)) then
          invalid_arg "Middleware.Route_metrics.create: buckets must be positive and increasing")
      bounds;
    let none = new_entry (Array.length bounds) "" in
    let table = Hashtbl.create 64 in
    Hashtbl.replace table "" none;
    { bounds; bounds_ns = Array.map (fun b -> int_of_float (b *. 1e9)) bounds; table; last = none; name }

  (* Route patterns are the strings Route registered: the same string
     again is the same entry, found without hashing. *)
  let entry t route =
    if t.last.e_route == route then t.last
    else begin
      let e =
        match Hashtbl.find t.table route with
        | e -> e
        | exception Not_found ->
            let e = new_entry (Array.length t.bounds) route in
            Hashtbl.replace t.table route e;
            e
      in
      t.last <- e;
      e
    end

  let rec bucket b ns i = if i < Array.length b && ns > Array.unsafe_get b i then bucket b ns (i + 1) else i

  let record t c =
    let e = entry t (Ctx.route_pattern c) in
    let code = Ctx.status_code c in
    let k = if code >= 100 && code < 600 then code / 100 else 0 in
    e.e_by_class.(k) <- e.e_by_class.(k) + 1;
    if not (Ctx.completed c) then e.e_incomplete <- e.e_incomplete + 1;
    let ns = Ctx.elapsed_ns c in
    e.e_count <- e.e_count + 1;
    e.e_sum_ns <- e.e_sum_ns + ns;
    let i = bucket t.bounds_ns ns 0 in
    e.e_buckets.(i) <- e.e_buckets.(i) + 1

  let middleware t =
    let complete c = record t c in
    fun next c ->
      (* What Route writes during [next] (once a hook is registered);
         cleared first, so that a request no route ran for, or one whose
         wrapper runs again (after Ctx.await_body), is counted right. *)
      Ctx.on_complete c complete;
      Ctx.set_route_pattern c "";
      next c

  let unmatched = "(unmatched)"

  let rows t =
    Hashtbl.fold
      (fun _ e acc ->
        if e.e_count = 0 then acc
        else
          let cum = ref 0 in
          let buckets =
            Array.mapi
              (fun i n ->
                cum := !cum + n;
                ((if i < Array.length t.bounds then t.bounds.(i) else infinity), !cum))
              e.e_buckets
          in
          {
            route = (if e.e_route = "" then unmatched else e.e_route);
            by_class = Array.copy e.e_by_class;
            incomplete = e.e_incomplete;
            count = e.e_count;
            sum_seconds = float_of_int e.e_sum_ns /. 1e9;
            buckets;
          }
          :: acc)
      t.table []
    |> List.sort (fun a b -> compare a.route b.route)

  (* Label values escaped as the exposition format has it. *)
  let label v =
    let b = Buffer.create (String.length v + 2) in
    String.iter
      (function
        | '\\' -> Buffer.add_string b "\\\\"
        | '"' -> Buffer.add_string b "\\\""
        | '\n' -> Buffer.add_string b "\\n"
        | ch -> Buffer.add_char b ch)
      v;
    Buffer.contents b

  let number f =
    if f = infinity then "+Inf"
    else
      let s = Printf.sprintf "%.17g" f in
      let short = Printf.sprintf "%g" f in
      if float_of_string short = f then short else s

  let classes = [| "none"; "1xx"; "2xx"; "3xx"; "4xx"; "5xx" |]

  let text t =
    let b = Buffer.create 1024 in
    let rows = rows t in
    let n = t.name in
    Printf.bprintf b "# HELP %s_requests_total Requests by route pattern and status class (this worker).\n" n;
    Printf.bprintf b "# TYPE %s_requests_total counter\n" n;
    List.iter
      (fun r ->
        Array.iteri
          (fun k v ->
            if v > 0 then Printf.bprintf b "%s_requests_total{route=\"%s\",status=\"%s\"} %d\n" n (label r.route) classes.(k) v)
          r.by_class)
      rows;
    Printf.bprintf b "# HELP %s_incomplete_total Responses not handed whole to the client.\n" n;
    Printf.bprintf b "# TYPE %s_incomplete_total counter\n" n;
    List.iter (fun r -> Printf.bprintf b "%s_incomplete_total{route=\"%s\"} %d\n" n (label r.route) r.incomplete) rows;
    Printf.bprintf b "# HELP %s_duration_seconds Time from the handler's call to the response's end.\n" n;
    Printf.bprintf b "# TYPE %s_duration_seconds histogram\n" n;
    List.iter
      (fun r ->
        let l = label r.route in
        Array.iter
          (fun (le, v) -> Printf.bprintf b "%s_duration_seconds_bucket{route=\"%s\",le=\"%s\"} %d\n" n l (number le) v)
          r.buckets;
        Printf.bprintf b "%s_duration_seconds_sum{route=\"%s\"} %s\n" n l (number r.sum_seconds);
        Printf.bprintf b "%s_duration_seconds_count{route=\"%s\"} %d\n" n l r.count)
      rows;
    Buffer.contents b

  let handler t c =
    Respond.start c Status.Ok;
    Ctx.header c Header_name.Content_type "text/plain; version=0.0.4; charset=utf-8";
    Ctx.header c Header_name.Cache_control "no-store";
    Ctx.body_string c (text t)
end
