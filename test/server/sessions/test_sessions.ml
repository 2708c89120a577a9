(* The session serialisation (what the SQL stores keep), the per-thread
   connections of Db_pool, and the SQLite store's schema and sweep. The
   stores end to end: test/e2e/test_sessions_sql.py. *)
open Httpz_server

let pairs = Alcotest.(list (pair string string))

let roundtrip name p =
  Alcotest.test_case name `Quick (fun () -> Alcotest.check pairs name p (Session.deserialize (Session.serialize p)))

let serialisation =
  [ roundtrip "empty" [];
    roundtrip "one" [ ("user", "alice") ];
    roundtrip "separators in keys and values" [ ("a&b=c", "x=y&z"); ("k", "v%20w+1") ];
    roundtrip "spaces, plus, percent, newline" [ ("sp ace", " lead and trail "); ("p", "1+1=2%"); ("nl", "a\r\nb") ];
    roundtrip "empty key and value" [ ("", ""); ("e", "") ];
    roundtrip "utf-8 and bytes" [ ("név", "ünïcødé ✓"); ("bin", "\000\001\255") ];
    roundtrip "order kept" [ ("z", "1"); ("a", "2"); ("m", "3") ];
    Alcotest.test_case "format is form encoding" `Quick (fun () ->
        Alcotest.(check string) "text" "user=alice&x=a%26b" (Session.serialize [ ("user", "alice"); ("x", "a&b") ]));
    Alcotest.test_case "qcheck-like: 500 random maps" `Quick (fun () ->
        Random.init 38;
        for _ = 1 to 500 do
          let s () = String.init (Random.int 12) (fun _ -> Char.chr (Random.int 256)) in
          let p = List.init (Random.int 6) (fun _ -> (s (), s ())) in
          Alcotest.check pairs "random" p (Session.deserialize (Session.serialize p))
        done) ]

let db_pool =
  [ Alcotest.test_case "one connection per thread, reused" `Quick (fun () ->
        let made = ref 0 and m = Mutex.create () in
        let pool = Db_pool.create (fun () -> Mutex.lock m; incr made; let n = !made in Mutex.unlock m; n) in
        let a = Db_pool.use pool Fun.id in
        let a' = Db_pool.use pool Fun.id in
        Alcotest.(check int) "same thread, same connection" a a';
        let other = ref 0 in
        let t = Thread.create (fun () -> other := Db_pool.use pool Fun.id; other := Db_pool.use pool (fun c -> c + 0)) () in
        Thread.join t;
        Alcotest.(check bool) "another thread, another connection" true (!other <> a);
        Alcotest.(check int) "two opened" 2 !made;
        Alcotest.(check int) "two held" 2 (Db_pool.opened pool));
    Alcotest.test_case "an exception drops the connection" `Quick (fun () ->
        let made = ref 0 and closed = ref [] in
        let pool = Db_pool.create ~close:(fun c -> closed := c :: !closed) (fun () -> incr made; !made) in
        let a = Db_pool.use pool Fun.id in
        (match Db_pool.use pool (fun _ -> failwith "query failed") with
         | _ -> Alcotest.fail "no exception"
         | exception Failure m -> Alcotest.(check string) "passes on" "query failed" m);
        Alcotest.(check (list int)) "closed" [ a ] !closed;
        Alcotest.(check bool) "next use reconnects" true (Db_pool.use pool Fun.id <> a));
    Alcotest.test_case "close_all closes and refuses" `Quick (fun () ->
        let closed = ref 0 in
        let pool = Db_pool.create ~close:(fun () -> incr closed) (fun () -> ()) in
        Db_pool.use pool ignore;
        Thread.join (Thread.create (fun () -> Db_pool.use pool ignore) ());
        Db_pool.close_all pool;
        Alcotest.(check int) "both closed" 2 !closed;
        Alcotest.(check int) "none held" 0 (Db_pool.opened pool);
        match Db_pool.use pool ignore with
        | () -> Alcotest.fail "used after close_all"
        | exception Failure _ -> ());
    Alcotest.test_case "a connection in use is closed when its call returns" `Quick (fun () ->
        let closed = ref 0 in
        let pool = Db_pool.create ~close:(fun () -> incr closed) (fun () -> ()) in
        Db_pool.use pool (fun () -> Db_pool.close_all pool; Alcotest.(check int) "not yet" 0 !closed);
        Alcotest.(check int) "then" 1 !closed) ]

let with_file f =
  let path = Filename.temp_file "httpz-sessions" ".db" in
  Fun.protect ~finally:(fun () -> List.iter (fun s -> try Sys.remove (path ^ s) with Sys_error _ -> ()) [ ""; "-wal"; "-shm" ])
    (fun () -> f path)

let query db sql =
  let out = ref [] in
  ignore (Sqlite3.exec_not_null_no_headers db ~cb:(fun row -> out := Array.to_list row :: !out) sql : Sqlite3.Rc.t);
  List.rev !out

let sqlite =
  let module S = Httpz_session_sqlite.Session_sqlite in
  [ Alcotest.test_case "schema: WAL, table, index" `Quick (fun () ->
        with_file (fun path ->
            let t = S.create path in
            S.pool t |> fun p ->
            Db_pool.use p (fun db ->
                Alcotest.(check (list (list string))) "wal" [ [ "wal" ] ] (query db "PRAGMA journal_mode");
                Alcotest.(check (list (list string))) "objects"
                  [ [ "index"; "httpz_sessions_expires" ]; [ "table"; "httpz_sessions" ] ]
                  (query db "SELECT type, name FROM sqlite_master WHERE name LIKE 'httpz_sessions%' ORDER BY name DESC"));
            S.close t));
    Alcotest.test_case "sweep deletes the expired rows only" `Quick (fun () ->
        with_file (fun path ->
            let t = S.create path in
            Db_pool.use (S.pool t) (fun db ->
                ignore (query db "INSERT INTO httpz_sessions VALUES ('a', 'u=1', 100), ('b', 'u=2', 200), ('c', 'u=3', 300)"));
            Alcotest.(check int) "two expired at 200" 2 (S.sweep t ~now:200);
            Db_pool.use (S.pool t) (fun db ->
                Alcotest.(check (list (list string))) "left" [ [ "c" ] ] (query db "SELECT id FROM httpz_sessions"));
            S.close t));
    Alcotest.test_case "a deleted session is not brought back by a later save" `Quick (fun () ->
        with_file (fun path ->
            let t = S.create path in
            let find id = Db_pool.use (S.pool t) (fun db -> query db (Printf.sprintf "SELECT data FROM httpz_sessions WHERE id = '%s'" id)) in
            let backend = S.backend t in
            backend.Session.save "id1" [ ("u", "ada") ] ~expires:max_int ~fresh:true;
            Alcotest.(check (list (list string))) "stored" [ [ "u=ada" ] ] (find "id1");
            backend.Session.save "id1" [ ("u", "ada"); ("k", "v") ] ~expires:max_int ~fresh:false;
            Alcotest.(check (list (list string))) "updated" [ [ "u=ada&k=v" ] ] (find "id1");
            backend.Session.delete "id1";
            (* A request that loaded it before the logout saves after. *)
            backend.Session.save "id1" [ ("u", "ada") ] ~expires:max_int ~fresh:false;
            Alcotest.(check (list (list string))) "still gone" [] (find "id1");
            S.close t));
    Alcotest.test_case "bad table name refused" `Quick (fun () ->
        with_file (fun path ->
            match S.create ~table:"x; DROP TABLE y" path with
            | _ -> Alcotest.fail "accepted"
            | exception Failure _ -> ())) ]

let () = Alcotest.run "sessions" [ ("serialisation", serialisation); ("db_pool", db_pool); ("sqlite", sqlite) ]
