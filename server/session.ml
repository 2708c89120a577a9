open Httpz

type entry = { data : (string * string) list; expires : int }

(* The memory store's table, bounded: ids in the order they were made, so
   that at [max_sessions] the oldest go first (ids removed meanwhile are
   skipped, and the queue is compacted when they pile up). *)
type table = { tbl : (string, entry) Hashtbl.t; order : string Queue.t; max_sessions : int }

type backend = {
  find : string -> now:int -> (string * string) list option;
  save : string -> (string * string) list -> expires:int -> fresh:bool -> unit;
  delete : string -> unit;
}

type kind = Signed of string list | Memory of table | Offloaded of backend

type store = { kind : kind; cookie : string; max_age : int; mutable made : int }

let check_cookie name =
  (* Cookie.to_string checks the name as a token when it is used. *)
  ignore (Cookie.to_string name "x")

let signed ?(cookie = "httpz_session") ?(max_age = 7 * 86400) ~keys () =
  if keys = [] then invalid_arg "Session.signed: no key";
  if List.exists (fun k -> String.length k < 32) keys then invalid_arg "Session.signed: keys need 32 bytes or more";
  check_cookie cookie;
  { kind = Signed keys; cookie; max_age; made = 0 }

let memory ?(cookie = "httpz_session") ?(max_age = 7 * 86400) ?(max_sessions = 100_000) () =
  check_cookie cookie;
  if max_sessions < 1 then invalid_arg "Session.memory: max_sessions must be at least 1";
  { kind = Memory { tbl = Hashtbl.create 64; order = Queue.create (); max_sessions }; cookie; max_age; made = 0 }

let offloaded ?(cookie = "httpz_session") ?(max_age = 7 * 86400) backend =
  check_cookie cookie;
  { kind = Offloaded backend; cookie; max_age; made = 0 }

let sweep tbl now = Hashtbl.filter_map_inplace (fun _ e -> if e.expires > now then Some e else None) tbl

(* A session is made: room for it first (the oldest go), so that no
   number of clients makes the table outgrow its bound. No sweep here: at
   the bound every new session would pay a walk of the whole table; the
   expired ones are swept every 256 sessions made (commit). *)
let admit m id =
  while Hashtbl.length m.tbl >= m.max_sessions && not (Queue.is_empty m.order) do
    Hashtbl.remove m.tbl (Queue.pop m.order)
  done;
  Queue.push id m.order;
  if Queue.length m.order > 2 * m.max_sessions then begin
    let live = Queue.create () in
    Queue.iter (fun id -> if Hashtbl.mem m.tbl id then Queue.push id live) m.order;
    Queue.clear m.order;
    Queue.transfer live m.order
  end


type t = {
  store : store;
  mutable pairs : (string * string) list;
  mutable id : string;  (** memory store: the cookie's id, [""] for none *)
  mutable dirty : bool;
  mutable fresh_id : bool;
  is_new : bool;
}

(* {1 Signed values} *)

let mac_input payload = "httpz-session-v1." ^ payload

(* Pairs as one string, for the stores that keep it: the same form
   encoding as the signed payload. *)
let serialize pairs = String.concat "&" (List.map (fun (k, v) -> Form.encode k ^ "=" ^ Form.encode v) pairs)
let deserialize s = if s = "" then [] else Form.pairs s

let encode store ~now pairs =
  match store.kind with
  | Memory _ | Offloaded _ -> invalid_arg "Session.encode: not a signed store"
  | Signed keys ->
      let body = serialize pairs in
      let payload = Token.base64url (string_of_int (now + store.max_age) ^ "|" ^ body) in
      payload ^ "." ^ Token.base64url (Httpz_sys.Hmac.sha256 ~key:(List.hd keys) (mac_input payload))

let decode store ~now v =
  match store.kind with
  | Memory _ | Offloaded _ -> None
  | Signed keys -> (
      match String.index_opt v '.' with
      | None -> None
      | Some i -> (
          let payload = String.sub v 0 i and mac = String.sub v (i + 1) (String.length v - i - 1) in
          match Token.of_base64url mac with
          | None -> None
          | Some mac ->
              let input = mac_input payload in
              (* Every key is tried, so the time taken does not say which one failed. *)
              let ok =
                List.fold_left (fun ok key -> Httpz_sys.Hmac.equal (Httpz_sys.Hmac.sha256 ~key input) mac || ok) false keys
              in
              if not ok then None
              else
                match Token.of_base64url payload with
                | None -> None
                | Some p -> (
                    match String.index_opt p '|' with
                    | None -> None
                    | Some j -> (
                        match int_of_string_opt (String.sub p 0 j) with
                        | Some exp when exp > now -> Some (Form.pairs (String.sub p (j + 1) (String.length p - j - 1)))
                        | _ -> None))))

(* {1 Loading} *)

let mk store pairs id is_new = { store; pairs; id; dirty = false; fresh_id = false; is_new }

let load store c =
  let mk = mk store in
  match Req.cookie c store.cookie with
  | None -> mk [] "" true
  | Some v -> (
      match store.kind with
      | Signed _ -> ( match decode store ~now:(Ctx.now c) v with Some p -> mk p "" false | None -> mk [] "" true)
      | Memory m -> (
          match Hashtbl.find_opt m.tbl v with
          | Some e when e.expires > Ctx.now c -> mk e.data v false
          | Some _ -> Hashtbl.remove m.tbl v; mk [] "" true
          | None -> mk [] "" true)
      | Offloaded _ -> invalid_arg "Session.load: this store is read off the loop: use Session.with_session")

(* An id the server could have made (Token.generate 32: 43 base64url
   characters): anything else is not looked up. *)
let plausible_id v =
  String.length v = 43
  && String.for_all (function 'A' .. 'Z' | 'a' .. 'z' | '0' .. '9' | '-' | '_' -> true | _ -> false) v

let reads_off_loop store = match store.kind with Offloaded _ -> true | Signed _ | Memory _ -> false

let with_session store c k =
  match store.kind with
  | Signed _ | Memory _ -> k (load store c) c
  | Offloaded b -> (
      match Req.cookie c store.cookie with
      | Some v when plausible_id v ->
          let now = Ctx.now c in
          Ctx.offload c
            (fun () -> b.find v ~now)
            (fun found c ->
              match found with
              | Some pairs -> k (mk store pairs v false) c
              | None -> k (mk store [] "" true) c)
      | _ -> k (mk store [] "" true) c)

let get s k = List.assoc_opt k s.pairs
let bindings s = s.pairs

let set s k v =
  s.pairs <- (k, v) :: List.remove_assoc k s.pairs;
  s.dirty <- true

let remove s k =
  if List.mem_assoc k s.pairs then begin
    s.pairs <- List.remove_assoc k s.pairs;
    s.dirty <- true
  end

let clear s =
  s.pairs <- [];
  s.dirty <- true

let csrf_key = "_csrf"

let regenerate s =
  (* A token the client held before login must not pass after it. *)
  s.pairs <- List.remove_assoc csrf_key s.pairs;
  s.fresh_id <- true;
  s.dirty <- true

let is_new s = s.is_new

(* {1 Committing} *)

let set_cookie s c value ~max_age =
  Respond.add_header c Header_name.Set_cookie
    (Cookie.to_string ~max_age ~path:"/" ~secure:(Ctx.secure c) ~http_only:true ~same_site:Cookie.Lax s.store.cookie value)

let commit s c =
  if s.dirty then begin
    s.dirty <- false;
    let store = s.store and now = Ctx.now c in
    match store.kind with
    | Signed _ ->
        if s.pairs = [] then set_cookie s c "" ~max_age:0
        else begin
          let v = encode store ~now (List.rev s.pairs) in
          if String.length v + String.length store.cookie > 4000 then invalid_arg "Session.commit: the signed cookie would exceed 4096 bytes";
          set_cookie s c v ~max_age:store.max_age
        end
    | Offloaded _ -> invalid_arg "Session.commit: this store writes off the loop: use Session.save"
    | Memory m ->
        let tbl = m.tbl in
        if s.id <> "" && (s.fresh_id || s.pairs = []) then Hashtbl.remove tbl s.id;
        if s.pairs = [] then begin
          if not s.is_new then set_cookie s c "" ~max_age:0;
          s.id <- ""
        end
        else begin
          let renew = s.id = "" || s.fresh_id in
          if renew then begin
            store.made <- store.made + 1;
            if store.made land 255 = 0 then sweep tbl now;
            s.id <- Token.generate 32;
            admit m s.id
          end;
          Hashtbl.replace tbl s.id { data = s.pairs; expires = now + store.max_age };
          if renew then set_cookie s c s.id ~max_age:store.max_age
        end;
        s.fresh_id <- false
  end

(* The write first, off the loop; the cookie once it is done, so that the
   client's next request finds what this one stored. *)
let save s c k =
  match s.store.kind with
  | Signed _ | Memory _ -> commit s c; k c
  | Offloaded _ when not s.dirty -> k c
  | Offloaded b ->
      s.dirty <- false;
      let store = s.store in
      let old = if s.id <> "" && (s.fresh_id || s.pairs = []) then s.id else "" in
      let renew = s.pairs <> [] && (s.id = "" || s.fresh_id) in
      let id = if s.pairs = [] then "" else if renew then Token.generate 32 else s.id in
      let pairs = s.pairs and expires = Ctx.now c + store.max_age in
      s.id <- id;
      s.fresh_id <- false;
      (* A session made and emptied in one request: nothing stored. *)
      if old = "" && id = "" then k c
      else
      Ctx.offload c
        (fun () ->
          if old <> "" then b.delete old;
          if id <> "" then b.save id pairs ~expires ~fresh:renew)
        (fun () c ->
          if id = "" then (if not s.is_new then set_cookie s c "" ~max_age:0)
          else if renew then set_cookie s c id ~max_age:store.max_age;
          k c)
