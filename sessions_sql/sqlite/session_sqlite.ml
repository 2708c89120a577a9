open Httpz_server

type t = { table : string; pool : Sqlite3.db Db_pool.t; writes : int ref }

let valid_table s =
  s <> ""
  && String.for_all (function 'a' .. 'z' | '0' .. '9' | '_' -> true | _ -> false) s
  && not (match s.[0] with '0' .. '9' -> true | _ -> false)

let fail db what = failwith (Printf.sprintf "Session_sqlite: %s: %s" what (Sqlite3.errmsg db))

let exec db sql = match Sqlite3.exec db sql with Sqlite3.Rc.OK -> () | _ -> fail db sql

let connect path busy () =
  let db = Sqlite3.db_open path in
  Sqlite3.busy_timeout db busy;
  exec db "PRAGMA synchronous = NORMAL";
  db

let close_db db = ignore (Sqlite3.db_close db : bool)

(* One statement, its parameters bound, stepped to the end; [row] sees
   each row. Finalized whatever happens. *)
let run db sql params ~row =
  let st = Sqlite3.prepare db sql in
  Fun.protect
    ~finally:(fun () -> ignore (Sqlite3.finalize st : Sqlite3.Rc.t))
    (fun () ->
      (match Sqlite3.bind_values st params with Sqlite3.Rc.OK -> () | _ -> fail db "bind");
      let rec loop () =
        match Sqlite3.step st with
        | Sqlite3.Rc.ROW -> row st; loop ()
        | Sqlite3.Rc.DONE -> ()
        | _ -> fail db sql
      in
      loop ())

let create ?(table = "httpz_sessions") ?(busy_timeout_ms = 5000) path =
  if not (valid_table table) then failwith ("Session_sqlite.create: bad table name " ^ table);
  let db = connect path busy_timeout_ms () in
  Fun.protect
    ~finally:(fun () -> close_db db)
    (fun () ->
      (* WAL is a property of the file: set once, every connection has it. *)
      run db "PRAGMA journal_mode = WAL" [] ~row:(fun st ->
          if String.lowercase_ascii (Sqlite3.column_text st 0) <> "wal" then fail db "journal_mode = WAL");
      exec db
        (Printf.sprintf
           "CREATE TABLE IF NOT EXISTS %s (id TEXT PRIMARY KEY, data TEXT NOT NULL, expires INTEGER NOT NULL)"
           table);
      exec db (Printf.sprintf "CREATE INDEX IF NOT EXISTS %s_expires ON %s (expires)" table table));
  { table; pool = Db_pool.create ~close:close_db (connect path busy_timeout_ms);
    writes = ref 0 }

let pool t = t.pool

let sweep_db t db ~now =
  run db (Printf.sprintf "DELETE FROM %s WHERE expires <= ?" t.table) [ Sqlite3.Data.INT (Int64.of_int now) ]
    ~row:ignore;
  Sqlite3.changes db

let sweep t ~now = Db_pool.use t.pool (fun db -> sweep_db t db ~now)

let find t id ~now =
  Db_pool.use t.pool (fun db ->
      let found = ref None in
      run db
        (Printf.sprintf "SELECT data FROM %s WHERE id = ? AND expires > ?" t.table)
        [ Sqlite3.Data.TEXT id; Sqlite3.Data.INT (Int64.of_int now) ]
        ~row:(fun st -> found := Some (Session.deserialize (Sqlite3.column_text st 0)));
      !found)

let save t id pairs ~expires ~fresh =
  Db_pool.use t.pool (fun db ->
      run db
        (if fresh then
           Printf.sprintf
             "INSERT INTO %s (id, data, expires) VALUES (?1, ?2, ?3) \
              ON CONFLICT (id) DO UPDATE SET data = excluded.data, expires = excluded.expires"
             t.table
         else Printf.sprintf "UPDATE %s SET data = ?2, expires = ?3 WHERE id = ?1" t.table)
        [ Sqlite3.Data.TEXT id; Sqlite3.Data.TEXT (Session.serialize pairs); Sqlite3.Data.INT (Int64.of_int expires) ]
        ~row:ignore;
      (* A race on the counter only moves a sweep by a write. *)
      incr t.writes;
      if !(t.writes) land 255 = 0 then ignore (sweep_db t db ~now:(int_of_float (Unix.time ())) : int))

let delete t id =
  Db_pool.use t.pool (fun db ->
      run db (Printf.sprintf "DELETE FROM %s WHERE id = ?" t.table) [ Sqlite3.Data.TEXT id ] ~row:ignore)

let backend t =
  { Session.find = (fun id ~now -> find t id ~now); save = (fun id p ~expires ~fresh -> save t id p ~expires ~fresh);
    delete = delete t }

let store ?cookie ?max_age t = Session.offloaded ?cookie ?max_age (backend t)

let close t = Db_pool.close_all t.pool
