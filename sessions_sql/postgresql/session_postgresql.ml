open Httpz_server

type t = { table : string; pool : Postgresql.connection Db_pool.t; writes : int ref }

let valid_table s =
  s <> ""
  && String.for_all (function 'a' .. 'z' | '0' .. '9' | '_' -> true | _ -> false) s
  && not (match s.[0] with '0' .. '9' -> true | _ -> false)

let connect conninfo () = new Postgresql.connection ~conninfo ()
let finish (c : Postgresql.connection) = try c#finish with _ -> ()

let exec (c : Postgresql.connection) ?(params = [||]) sql =
  c#exec ~expect:[ Postgresql.Command_ok; Postgresql.Tuples_ok ] ~params sql

let create ?(table = "httpz_sessions") ~conninfo () =
  if not (valid_table table) then failwith ("Session_postgresql.create: bad table name " ^ table);
  let setup c =
    ignore
      (exec c
         (Printf.sprintf "CREATE TABLE IF NOT EXISTS %s (id TEXT PRIMARY KEY, data TEXT NOT NULL, expires BIGINT NOT NULL)"
            table));
    ignore (exec c (Printf.sprintf "CREATE INDEX IF NOT EXISTS %s_expires ON %s (expires)" table table))
  in
  (match connect conninfo () with
   | exception Postgresql.Error e -> failwith ("Session_postgresql.create: " ^ Postgresql.string_of_error e)
   | c ->
       Fun.protect ~finally:(fun () -> finish c) (fun () ->
           (* Two servers starting at once may both create: the loser of
              that race sees a duplicate, and the table is there. *)
           match setup c with
           | () -> ()
           | exception Postgresql.Error _ -> (
               match setup c with
               | () -> ()
               | exception Postgresql.Error e -> failwith ("Session_postgresql.create: " ^ Postgresql.string_of_error e))));
  { table; pool = Db_pool.create ~close:finish (connect conninfo); writes = ref 0 }

let pool t = t.pool

let sweep_conn t c ~now =
  let r = exec c ~params:[| string_of_int now |] (Printf.sprintf "DELETE FROM %s WHERE expires <= $1" t.table) in
  match int_of_string_opt r#cmd_tuples with Some n -> n | None -> 0

let sweep t ~now = Db_pool.use t.pool (fun c -> sweep_conn t c ~now)

let find t id ~now =
  Db_pool.use t.pool (fun c ->
      let r =
        exec c ~params:[| id; string_of_int now |]
          (Printf.sprintf "SELECT data FROM %s WHERE id = $1 AND expires > $2" t.table)
      in
      if r#ntuples = 0 then None else Some (Session.deserialize (r#getvalue 0 0)))

let save t id pairs ~expires ~fresh =
  Db_pool.use t.pool (fun c ->
      ignore
        (exec c
           ~params:[| id; Session.serialize pairs; string_of_int expires |]
           (if fresh then
              Printf.sprintf
                "INSERT INTO %s (id, data, expires) VALUES ($1, $2, $3) \
                 ON CONFLICT (id) DO UPDATE SET data = EXCLUDED.data, expires = EXCLUDED.expires"
                t.table
            else Printf.sprintf "UPDATE %s SET data = $2, expires = $3 WHERE id = $1" t.table));
      incr t.writes;
      if !(t.writes) land 255 = 0 then ignore (sweep_conn t c ~now:(int_of_float (Unix.time ())) : int))

let delete t id =
  Db_pool.use t.pool (fun c -> ignore (exec c ~params:[| id |] (Printf.sprintf "DELETE FROM %s WHERE id = $1" t.table)))

let backend t =
  { Session.find = (fun id ~now -> find t id ~now); save = (fun id p ~expires ~fresh -> save t id p ~expires ~fresh);
    delete = delete t }

let store ?cookie ?max_age t = Session.offloaded ?cookie ?max_age (backend t)

let close t = Db_pool.close_all t.pool
