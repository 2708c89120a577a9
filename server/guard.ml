open Httpz

type auth = { realm : string; user_file : string }
type rate = { per_second : float; burst : int }
type key = Address | Header of string | Cookie of string | Site of string
type zone = { name : string; key : key; entries : int; status : int }
type config = { access : Address_rules.rule list; rate : rate option; auth : auth option; zone : zone }

let default_zone = { name = ""; key = Address; entries = 16384; status = 429 }
let none = { access = []; rate = None; auth = None; zone = default_zone }
let is_none c = c.access = [] && c.rate = None && c.auth = None

(* The key as read per request: made once, matched without allocation. *)
type reader = By_address | By_header of string | By_cookie of string * Cookie.t | By_site of Bigstring.t

type t = {
  rules : Address_rules.t;
  limit : Rate_limit.t option;
  reader : reader;
  status : Status.t;  (** over the rate *)
  status_text : string;  (** its plain answer *)
  users : Basic_auth.t option;
  zone : string;  (** its name in the error log's lines *)
  mutable wait : int;  (** seconds of the latest [Too_many] or [Unavailable] *)
}

let key_name = function
  | Address -> "$binary_remote_addr"
  | Header h -> "$http_" ^ h
  | Cookie n -> "$cookie_" ^ n
  | Site _ -> "$server_name" (* one table for every site: the name is in each key *)

let zone_id z = Printf.sprintf "%s %s" z.name (key_name z.key)

let create ?rate_entries ?zones c =
  let ( let* ) = Result.bind in
  let* rules = Address_rules.compile c.access in
  let* limit =
    match c.rate with
    | None -> Ok None
    | Some r ->
        if not (r.per_second > 0. && Float.is_finite r.per_second) then
          Error (Printf.sprintf "rate %g: must be a positive number of requests per second" r.per_second)
        else if r.burst < 1 then Error (Printf.sprintf "burst %d: must be at least 1" r.burst)
        else
          let entries = match rate_entries with Some n -> n | None -> c.zone.entries in
          (* A key the client chooses costs nothing to vary: a full
             neighbourhood evicts rather than refuse (Rate_limit). *)
          let evict = match c.zone.key with Header _ | Cookie _ -> true | Address | Site _ -> false in
          (* A named zone is the same table for every limit naming it; an
             unnamed one is this configuration's own. *)
          let id =
            if c.zone.name <> "" then zone_id c.zone
            else Printf.sprintf " %g %d %s" r.per_second r.burst (key_name c.zone.key)
          in
          match
            match zones with
            | Some find -> Rate_limit.of_zone ~evict (find ~id ~entries) ~rate:r.per_second ~burst:r.burst
            | None -> Rate_limit.of_zone ~evict (Limit_zone.create ~entries ()) ~rate:r.per_second ~burst:r.burst
          with
          | l -> Ok (Some l)
          | exception Httpz_sys.Entropy.Unavailable e ->
              Error ("the rate table's secret: " ^ Httpz_sys.Entropy.error_to_string e)
  in
  let* users =
    match c.auth with
    | None -> Ok None
    | Some a -> Result.map Option.some (Basic_auth.load ~realm:a.realm a.user_file)
  in
  let* status =
    match Status.of_code c.zone.status with
    | Some s when c.zone.status >= 400 && c.zone.status <= 599 -> Ok s
    | _ -> Error (Printf.sprintf "status %d: give a 4xx or 5xx code" c.zone.status)
  in
  let reader =
    match c.zone.key with
    | Address -> By_address
    | Header h -> By_header h
    | Cookie n -> By_cookie (n, Cookie.create ())
    | Site s -> By_site (Bigstring.of_string s)
  in
  let status_text = Printf.sprintf "%d %s\n" (Status.code status) (Status.reason status) in
  Ok { rules; limit; reader; status; status_text; users; zone = (if c.zone.name = "" then "limit_req" else c.zone.name); wait = 1 }

type verdict = Admit | Forbidden | Unauthorized | Too_many | Unavailable

let addr_wait t addr now_ns =
  match t.limit with
  | None -> 0
  | Some l -> (
      match t.reader with
      | By_address -> Rate_limit.admit l addr ~now_ns
      | By_site s -> Rate_limit.admit_span l s ~off:0 ~len:(Bigstring.length s) ~now_ns
      | By_header _ | By_cookie _ -> 0)

(* A request without the key's header or cookie, or with it empty, is not
   limited (nginx accounts no empty key). *)
let request_wait t c now_ns =
  match t.limit with
  | None -> 0
  | Some l -> (
      match t.reader with
      | By_address | By_site _ -> addr_wait t (Ctx.peer_ip c) now_ns
      | By_header name ->
          let req = Ctx.request c and buf = Ctx.buffer c in
          let i = Request.find_string req buf name in
          if i < 0 then 0
          else
            let v = Request.header_value req i in
            if Span.len v = 0 then 0 else Rate_limit.admit_span l buf ~off:(Span.off v) ~len:(Span.len v) ~now_ns
      | By_cookie (name, cursor) ->
          let req = Ctx.request c and buf = Ctx.buffer c in
          if not (Cookie.find_in_request cursor buf req name) then 0
          else
            let v = Cookie.value cursor in
            if Span.len v = 0 then 0 else Rate_limit.admit_span l buf ~off:(Span.off v) ~len:(Span.len v) ~now_ns)

let judge t wait buf authorization =
    if wait > 0 then begin
      t.wait <- wait;
      Too_many
    end
    else if wait < 0 then begin
      t.wait <- -wait;
      Unavailable
    end
    else
      match t.users with
      | None -> Admit
      | Some u -> (
          match Basic_auth.check u buf authorization with
          | Basic_auth.Granted -> Admit
          | Missing | Refused -> Unauthorized)

let decide t ~addr ~now_ns buf authorization =
  if not (Address_rules.allowed t.rules addr) then Forbidden else judge t (addr_wait t addr now_ns) buf authorization
let retry_after t = t.wait

let check t c =
  let req = Ctx.request c and buf = Ctx.buffer c in
  let authorization =
    match t.users with
    | None -> Span.empty
    | Some _ ->
        let i = Request.find req Header_name.Authorization in
        if i >= 0 then Request.header_value req i else Span.empty
  in
  let addr = Ctx.peer_ip c in
  let v =
    if not (Address_rules.allowed t.rules addr) then Forbidden
    else
      let now_ns = match t.limit with None -> 0 | Some _ -> Syscall.clock_monotonic_ns () in
      judge t (request_wait t c now_ns) buf authorization
  in
  (* The error log's line of a refusal, as nginx writes it (fail2ban). *)
  (match v with Admit | Unavailable -> () | Forbidden -> Refusal_log.forbidden c
   | Too_many -> Refusal_log.limited c ~wait:t.wait ~zone:t.zone | Unauthorized -> Refusal_log.unauthorized c t.users);
  v

(* At debug level only (a flood of refused requests must not flood the
   log, nor allocate): who was refused what. *)
let log_refusal c code =
  if Log.enabled Log.Debug then begin
    let host, _ = Ctx.client c in
    Log.debug "guard: %d for %s (%s)" code host
      (Span.to_string (Ctx.buffer c) (Request.target (Ctx.request c)))
  end

(* Without a user file (a caller's verdict, not this guard's), a 401
   still needs a challenge (RFC 9110 section 11.6.1). *)
let default_challenge = "Basic realm=\"restricted\", charset=\"UTF-8\""

let answer c text =
  Ctx.header c Header_name.Content_type "text/plain; charset=utf-8";
  Ctx.header c Header_name.Cache_control "no-store";
  Ctx.body_string c text

(* Through the application's error renderer: the fields a refusal needs
   are required of its answer. *)
let rendered t c v =
  let status, reason =
    match v with
    | Admit | Forbidden -> (Status.Forbidden, Status.reason Status.Forbidden)
    | Unauthorized -> (Status.Unauthorized, Status.reason Status.Unauthorized)
    | Too_many -> (t.status, Status.reason t.status)
    | Unavailable -> (Status.Service_unavailable, "too many clients limited at once")
  in
  log_refusal c (Status.code status);
  (match v with
   | Unauthorized ->
       Errors.require Header_name.Www_authenticate
         (match t.users with Some u -> Basic_auth.challenge u | None -> default_challenge)
   | Too_many | Unavailable -> Errors.require_int Header_name.Retry_after (max 1 t.wait)
   | Admit | Forbidden -> ());
  Errors.require_no_store ();
  Errors.answer c status ~reason

let refuse t c v =
  match v with
  | Admit -> ()
  | v when Errors.active None -> rendered t c v
  | Forbidden ->
      log_refusal c 403;
      Ctx.start c Status.Forbidden;
      answer c "403 Forbidden\n"
  | Unauthorized ->
      log_refusal c 401;
      Ctx.start c Status.Unauthorized;
      Ctx.header c Header_name.Www_authenticate
        (match t.users with Some u -> Basic_auth.challenge u | None -> default_challenge);
      answer c "401 Unauthorized\n"
  | Too_many ->
      log_refusal c (Status.code t.status);
      Ctx.start c t.status;
      Ctx.header_int c Header_name.Retry_after (max 1 t.wait);
      answer c t.status_text
  | Unavailable ->
      log_refusal c 503;
      Ctx.start c Status.Service_unavailable;
      Ctx.header_int c Header_name.Retry_after (max 1 t.wait);
      answer c "503 Service Unavailable: too many clients limited at once\n"

let admit t c =
  match check t c with
  | Admit -> true
  | v ->
      refuse t c v;
      false

let handler t ~app c = if admit t c then app c

(* {1 Under a prefix} *)

(* [prefix] without its trailing slashes ([""] for "/"): a path is under
   it when it equals it or continues with ['/']. *)
let under ~prefix t ~app =
  let p =
    let n = ref (String.length prefix) in
    while !n > 0 && prefix.[!n - 1] = '/' do decr n done;
    String.sub prefix 0 !n
  in
  let plen = String.length p in
  let split = Target.create () and path = Bigstring.create 4096 in
  let guarded = handler t ~app in
  fun c ->
    let buf = Ctx.buffer c in
    let inside =
      plen = 0
      ||
      match Target.split split buf (Request.target (Ctx.request c)) with
      | Target.Origin | Target.Absolute ->
          let n = Target.decode_path buf (Target.path split) ~dst:path in
          n < 0
          || n >= plen
             && Bigstring.equal_string path ~off:0 ~len:plen p
             && (n = plen || Bigstring.unsafe_get path plen = '/')
      | Target.Asterisk -> false
      | Target.Error -> true
    in
    if inside then guarded c else app c
