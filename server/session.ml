open Httpz

type entry = { data : (string * string) list; expires : int }

(* The memory store's table, bounded: ids in the order they were made, so
   that at [max_sessions] the oldest go first (ids removed meanwhile are
   skipped, and the queue is compacted when they pile up). *)
type table = { tbl : (string, entry) Hashtbl.t; order : string Queue.t; max_sessions : int }

type kind = Signed of string list | Memory of table

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

let encode store ~now pairs =
  match store.kind with
  | Memory _ -> invalid_arg "Session.encode: not a signed store"
  | Signed keys ->
      let body = String.concat "&" (List.map (fun (k, v) -> Form.encode k ^ "=" ^ Form.encode v) pairs) in
      let payload = Token.base64url (string_of_int (now + store.max_age) ^ "|" ^ body) in
      payload ^ "." ^ Token.base64url (Httpz_sys.Hmac.sha256 ~key:(List.hd keys) (mac_input payload))

let decode store ~now v =
  match store.kind with
  | Memory _ -> None
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

let load store c =
  let mk pairs id is_new = { store; pairs; id; dirty = false; fresh_id = false; is_new } in
  match Req.cookie c store.cookie with
  | None -> mk [] "" true
  | Some v -> (
      match store.kind with
      | Signed _ -> ( match decode store ~now:(Ctx.now c) v with Some p -> mk p "" false | None -> mk [] "" true)
      | Memory m -> (
          match Hashtbl.find_opt m.tbl v with
          | Some e when e.expires > Ctx.now c -> mk e.data v false
          | Some _ -> Hashtbl.remove m.tbl v; mk [] "" true
          | None -> mk [] "" true))

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

let regenerate s =
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
