(* File_cache on its own: hits, limits, eviction, revalidation, and that a
   lookup allocates nothing. Real files, real fstat. *)
open Httpz_sys
open Httpz_static
module B = Httpz.Bigstring

let dir =
  let f = Filename.temp_file "httpz_fc" "" in
  Sys.remove f; Unix.mkdir f 0o755; f

let () = at_exit (fun () -> ignore (Sys.command ("rm -rf " ^ Filename.quote dir)))

let file name contents =
  let p = Filename.concat dir name in
  let oc = open_out_bin p in
  output_string oc contents; close_out oc; p

let st = Syscall.stat_create ()

(* Opens [path] and stats it; the caller closes the fd. *)
let opened path =
  let fd = Syscall.fd_of_unix (Unix.openfile path [ Unix.O_RDONLY ] 0) in
  Alcotest.(check int) "fstat" 0 (Syscall.fstat fd st);
  fd

let key s = B.of_string s

let insert t name ~now_ms =
  let fd = opened (Filename.concat dir name) in
  let k = key ("/" ^ name) in
  let slot = File_cache.insert t k ~len:(B.length k) ~fd st ~now_ms in
  ignore (Syscall.close fd);
  slot

let find t name = let k = key ("/" ^ name) in File_cache.find t k ~len:(B.length k)

let test_hit_and_limits () =
  ignore (file "a.txt" "alpha");
  ignore (file "big.txt" (String.make 100 'x'));
  let t = File_cache.create ~max_file:64 ~max_bytes:1000 ~ttl_ms:1000 () in
  let s = insert t "a.txt" ~now_ms:0 in
  Alcotest.(check bool) "inserted" true (s >= 0);
  Alcotest.(check int) "found at its slot" s (find t "a.txt");
  Alcotest.(check string) "contents" "alpha" (B.sub_string (File_cache.content t s) ~off:0 ~len:5);
  Alcotest.(check int) "size" 5 (File_cache.size t s);
  Alcotest.(check bool) "fresh within ttl" true (File_cache.fresh t s ~now_ms:999);
  Alcotest.(check bool) "stale after ttl" false (File_cache.fresh t s ~now_ms:1000);
  Alcotest.(check int) "over max_file: not cached" (-1) (insert t "big.txt" ~now_ms:0);
  Alcotest.(check int) "unknown path" (-1) (find t "nope.txt");
  Alcotest.(check int) "bytes counted" 5 (File_cache.bytes t)

let test_budget () =
  List.iter (fun n -> ignore (file n (String.make 40 'y'))) [ "b1"; "b2"; "b3" ];
  let t = File_cache.create ~max_file:64 ~max_bytes:100 ~ttl_ms:1000 () in
  Alcotest.(check bool) "first fits" true (insert t "b1" ~now_ms:0 >= 0);
  Alcotest.(check bool) "second fits" true (insert t "b2" ~now_ms:0 >= 0);
  Alcotest.(check int) "third exceeds the byte budget" (-1) (insert t "b3" ~now_ms:0);
  Alcotest.(check int) "budget respected" 80 (File_cache.bytes t);
  (* Re-inserting an existing entry replaces it, not adds to it. *)
  Alcotest.(check bool) "re-insert" true (insert t "b1" ~now_ms:5 >= 0);
  Alcotest.(check int) "no double count" 80 (File_cache.bytes t)

let test_eviction () =
  (* Capacity 16 (one probe window): the 17th file evicts the least
     recently used one, and the cache keeps working. *)
  let t = File_cache.create ~capacity:16 ~max_file:64 ~max_bytes:100_000 ~ttl_ms:1000 () in
  for i = 0 to 16 do
    let n = Printf.sprintf "e%02d" i in
    ignore (file n n);
    Alcotest.(check bool) ("insert " ^ n) true (insert t n ~now_ms:i >= 0)
  done;
  Alcotest.(check int) "oldest evicted" (-1) (find t "e00");
  Alcotest.(check bool) "newest present" true (find t "e16" >= 0);
  Alcotest.(check int) "bytes track evictions" (16 * 3) (File_cache.bytes t)

(* A note belongs to an entry: kept while it stays, gone when its slot is
   filled again. *)
let test_notes () =
  let t = File_cache.create ~capacity:16 ~max_file:64 ~max_bytes:100_000 ~ttl_ms:1000 () in
  ignore (file "n00" "n00");
  let s = insert t "n00" ~now_ms:0 in
  Alcotest.(check int) "unset on a new key" (-1) (File_cache.note t s);
  File_cache.set_note t s 7;
  Alcotest.(check int) "kept" 7 (File_cache.note t s);
  Alcotest.(check int) "kept through hits" 7 (File_cache.note t (find t "n00"));
  Alcotest.(check int) "unset again when the entry is filled again" (-1)
    (File_cache.note t (insert t "n00" ~now_ms:1));
  (* 16 newer files: n00's slot goes to one of them. *)
  for i = 1 to 16 do
    let n = Printf.sprintf "n%02d" i in
    ignore (file n n);
    let s' = insert t n ~now_ms:(i + 1) in
    Alcotest.(check int) ("unset on " ^ n) (-1) (File_cache.note t s')
  done;
  Alcotest.(check int) "n00 evicted" (-1) (find t "n00")

let test_revalidate () =
  let p = file "r.txt" "one" in
  let t = File_cache.create ~max_file:64 ~max_bytes:1000 ~ttl_ms:10 () in
  let s = insert t "r.txt" ~now_ms:0 in
  let fd = opened p in
  ignore (Syscall.close fd);
  Alcotest.(check bool) "unchanged file revalidates" true (File_cache.revalidate t s st ~now_ms:50);
  Alcotest.(check bool) "and is fresh again" true (File_cache.fresh t s ~now_ms:55);
  ignore (file "r.txt" "two!");
  let fd = opened p in
  ignore (Syscall.close fd);
  Alcotest.(check bool) "changed size: not revalidated" false (File_cache.revalidate t s st ~now_ms:60);
  let k = key "/gone.gz" in
  File_cache.insert_absent t k ~len:(B.length k) ~now_ms:0;
  let a = File_cache.find t k ~len:(B.length k) in
  Alcotest.(check bool) "absent recorded" true (a >= 0 && File_cache.is_absent t a)

let test_disabled () =
  ignore (file "d.txt" "d");
  let t = File_cache.create ~max_file:0 ~max_bytes:1000 ~ttl_ms:1000 () in
  Alcotest.(check bool) "disabled" false (File_cache.enabled t);
  Alcotest.(check int) "insert does nothing" (-1) (insert t "d.txt" ~now_ms:0);
  Alcotest.(check int) "find never hits" (-1) (find t "d.txt")

(* Keys hash and compare a word at a time, the last bytes as one word:
   the same key found from a buffer with other bytes after it, keys one
   byte apart told apart, at every length around the word size. *)
let test_key_words () =
  let t = File_cache.create ~max_file:64 ~max_bytes:100_000 ~ttl_ms:1000 () in
  let name len c = String.init len (fun i -> if i = 0 then '/' else Char.chr (c + (i mod 20))) in
  let in_slack s garbage =
    let b = B.create (String.length s + 16) in
    Bigarray.Array1.fill b garbage;
    B.blit_from_string s ~src_off:0 b ~dst_off:0 ~len:(String.length s);
    b
  in
  for len = 1 to 24 do
    let s = name len 97 in
    let k = key s in
    File_cache.insert_absent t k ~len ~now_ms:0;
    let slot = File_cache.find t k ~len in
    Alcotest.(check bool) (Printf.sprintf "%S found" s) true (slot >= 0);
    List.iter
      (fun g ->
        Alcotest.(check int) (Printf.sprintf "%S found past %C" s g) slot
          (File_cache.find t (in_slack s g) ~len))
      [ '\000'; 'x'; '\255' ];
    for pos = 1 to len - 1 do
      let other = String.mapi (fun i c -> if i = pos then Char.chr (Char.code c + 40) else c) s in
      Alcotest.(check int) (Printf.sprintf "%S is not %S" other s) (-1)
        (File_cache.find t (in_slack other 'x') ~len)
    done
  done

(* An evicted key's slot is taken over by a key of the same length that
   differs in its first word: the new key is the one found. *)
let test_same_length_eviction () =
  let t = File_cache.create ~capacity:16 ~max_file:64 ~max_bytes:100_000 ~ttl_ms:1000 () in
  let k i = key (Printf.sprintf "%02d/same-length-key.gz" i) in
  for i = 0 to 15 do let b = k i in File_cache.insert_absent t b ~len:(B.length b) ~now_ms:i done;
  let old = k 0 in
  File_cache.set_note t (File_cache.find t old ~len:(B.length old)) 7;
  let b = k 16 in
  File_cache.insert_absent t b ~len:(B.length b) ~now_ms:16;
  let s = File_cache.find t b ~len:(B.length b) in
  Alcotest.(check bool) "the new key is found" true (s >= 0 && File_cache.is_absent t s);
  Alcotest.(check int) "with a note of its own, not the old key's" (-1) (File_cache.note t s);
  Alcotest.(check int) "the oldest is gone" (-1) (File_cache.find t old ~len:(B.length old))

let alloc_tests =
  ignore (file "z.txt" "zzz");
  let t = File_cache.create ~max_file:64 ~max_bytes:1000 ~ttl_ms:1000 () in
  ignore (insert t "z.txt" ~now_ms:0);
  let k = key "/z.txt" and miss = key "/missing/path" in
  let s = File_cache.find t k ~len:(B.length k) in
  let fd = opened (Filename.concat dir "z.txt") in
  ignore (Syscall.close fd);
  [ Httpz_test_support.zero_alloc "find (hit) + fresh + accessors" (fun () ->
        let s = File_cache.find t k ~len:(B.length k) in
        ignore (Sys.opaque_identity (File_cache.fresh t s ~now_ms:1));
        ignore (Sys.opaque_identity (File_cache.content t s));
        ignore (Sys.opaque_identity (File_cache.size t s + File_cache.mtime_s t s)));
    (ignore (file "a-longer-name-for-words.txt" "w");
     ignore (insert t "a-longer-name-for-words.txt" ~now_ms:0);
     let long = key "/a-longer-name-for-words.txt" in
     Httpz_test_support.zero_alloc "find (hit, a key of several words)" (fun () ->
         let s = File_cache.find t long ~len:(B.length long) in
         if s < 0 then failwith "the long key was not found";
         ignore (Sys.opaque_identity s)));
    (let slack = B.create 64 in
     B.blit_from_string "/z.txt" ~src_off:0 slack ~dst_off:0 ~len:6;
     Httpz_test_support.zero_alloc "find (hit, last bytes read as a word)" (fun () ->
         let s = File_cache.find t slack ~len:6 in
         if s < 0 then failwith "the key was not found from a longer buffer";
         ignore (Sys.opaque_identity s)));
    Httpz_test_support.zero_alloc "find (miss)" (fun () ->
        ignore (Sys.opaque_identity (File_cache.find t miss ~len:(B.length miss))));
    Httpz_test_support.zero_alloc "revalidate (unchanged)" (fun () ->
        ignore (Sys.opaque_identity (File_cache.revalidate t s st ~now_ms:2)));
    (* A sidecar that stays absent is recorded again once per TTL. *)
    (File_cache.insert_absent t miss ~len:(B.length miss) ~now_ms:0;
     Httpz_test_support.zero_alloc "insert_absent (refresh)" (fun () ->
         File_cache.insert_absent t miss ~len:(B.length miss) ~now_ms:3)) ]

(* The gzip form: made by Compress (gunzip reads it back), kept beside the
   identity bytes, counted in the budget, dropped when the file changes. *)
let gunzip (z : B.t) =
  let p = Filename.concat dir "z.gz" in
  let oc = open_out_bin p in
  output_string oc (B.to_string z);
  close_out oc;
  let ic = Unix.open_process_in ("gzip -dc " ^ Filename.quote p) in
  let b = Buffer.create 4096 in
  (try
     while true do
       Buffer.add_channel b ic 1
     done
   with End_of_file -> ());
  ignore (Unix.close_process_in ic);
  Buffer.contents b

let test_zipped () =
  let text = String.concat "" (List.init 200 (fun i -> Printf.sprintf "line %d of text\n" i)) in
  ignore (file "z.txt" text);
  let t = File_cache.create ~max_file:65536 ~max_bytes:(String.length text + 1000) ~ttl_ms:1000 () in
  let s = insert t "z.txt" ~now_ms:0 in
  Alcotest.(check int) "untried" File_cache.zip_untried (File_cache.zip_state t s);
  let z = Compress.gzip ~level:6 (File_cache.content t s) ~off:0 ~len:(File_cache.size t s) in
  Alcotest.(check string) "gunzip gives the file back" text (gunzip z);
  Alcotest.(check string) "same bytes and level, same output (strong ETag)"
    (B.to_string z)
    (B.to_string (Compress.gzip ~level:6 (B.of_string text) ~off:0 ~len:(String.length text)));
  List.iter
    (fun level ->
      let z = Compress.gzip ~level (B.of_string text) ~off:0 ~len:(String.length text) in
      Alcotest.(check string) (Printf.sprintf "level %d" level) text (gunzip z))
    [ 1; 9 ];
  Alcotest.(check string) "empty input" "" (gunzip (Compress.gzip ~level:6 (B.create 0) ~off:0 ~len:0));
  File_cache.set_zipped t s z;
  Alcotest.(check int) "ready" File_cache.zip_ready (File_cache.zip_state t s);
  Alcotest.(check int) "counted in the budget" (String.length text + B.length z) (File_cache.bytes t);
  Alcotest.(check bool) "revalidate keeps it" true
    (let fd = opened (Filename.concat dir "z.txt") in
     let ok = File_cache.revalidate t s st ~now_ms:10 in
     ignore (Syscall.close fd);
     ok && File_cache.zip_state t s = File_cache.zip_ready);
  ignore (file "z.txt" (text ^ "more\n"));
  let s = insert t "z.txt" ~now_ms:20 in
  Alcotest.(check int) "a changed file starts untried" File_cache.zip_untried (File_cache.zip_state t s);
  Alcotest.(check int) "its old form left the budget" (String.length text + 5) (File_cache.bytes t);
  (* Not smaller than the file: refused, the identity form is served. *)
  File_cache.set_zipped t s (B.create (File_cache.size t s));
  Alcotest.(check int) "refused when not smaller" File_cache.zip_refused (File_cache.zip_state t s);
  Alcotest.check_raises "level 0" (Invalid_argument "Compress.gzip: level") (fun () ->
      ignore (Compress.gzip ~level:0 (B.create 1) ~off:0 ~len:1))

let () =
  Alcotest.run "file_cache"
    [ "cache",
      [ Alcotest.test_case "hit, ttl, limits" `Quick test_hit_and_limits;
        Alcotest.test_case "byte budget" `Quick test_budget;
        Alcotest.test_case "eviction" `Quick test_eviction;
        Alcotest.test_case "notes follow the key" `Quick test_notes;
        Alcotest.test_case "revalidate and absent" `Quick test_revalidate;
        Alcotest.test_case "disabled" `Quick test_disabled;
        Alcotest.test_case "compressed form" `Quick test_zipped;
        Alcotest.test_case "keys a word at a time" `Quick test_key_words;
        Alcotest.test_case "same-length key takes an evicted slot" `Quick test_same_length_eviction ];
      "alloc", alloc_tests ]
