(* Access control: the libcrypt stub against known hashes, address rules,
   the rate limiter on a fake clock, per-client connection counts, Basic
   authentication and the guard that composes them; the path of a
   request that passes allocates nothing. *)

open Httpz
open Httpz_server
open Httpz_sys
module T = Httpz_test_support

(* Known hashes of "secret": `openssl passwd -6 -salt abcdefgh secret`,
   `openssl passwd -5 -salt abcdefgh secret`; the bcrypt one is Openwall's
   crypt_blowfish test vector for "U*U". *)
let sha512 = "$6$abcdefgh$ltjgWl6579NluT/Vi1nwEvcil.G5Nbc4NiXZaNGStk8PSwGfQv72N2CKPPrVACtLtip/cZ/1GM/O6IND4WQhG."
let sha256 = "$5$abcdefgh$gruCpC7VkOTspMQTTSAR8mtlO9Upms.fwqE5y16JVM."
let bcrypt_uu = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"

let ok_bool = Alcotest.(result bool string)

(* [openssl passwd FLAG -salt SALT PW], run now. *)
let openssl_passwd flag salt pw =
  let out = Filename.temp_file "passwd" ".txt" in
  let cmd =
    Printf.sprintf "openssl passwd %s -salt %s %s > %s" flag (Filename.quote salt) (Filename.quote pw) (Filename.quote out)
  in
  if Sys.command cmd <> 0 then Alcotest.failf "%s failed" cmd;
  let ic = open_in out in
  let h = input_line ic in
  close_in ic;
  Sys.remove out;
  String.trim h

let crypt_tests =
  [
    Alcotest.test_case "SHA-512 crypt of openssl passwd -6" `Quick (fun () ->
        Alcotest.check ok_bool "right" (Ok true) (Crypt.verify ~hash:sha512 "secret");
        Alcotest.check ok_bool "wrong" (Ok false) (Crypt.verify ~hash:sha512 "Secret"));
    Alcotest.test_case "SHA-256 crypt of openssl passwd -5" `Quick (fun () ->
        Alcotest.check ok_bool "right" (Ok true) (Crypt.verify ~hash:sha256 "secret");
        Alcotest.check ok_bool "wrong" (Ok false) (Crypt.verify ~hash:sha256 "secret "));
    Alcotest.test_case "bcrypt test vector, and $2b$ of a fresh salt" `Quick (fun () ->
        Alcotest.check ok_bool "U*U" (Ok true) (Crypt.verify ~hash:bcrypt_uu "U*U");
        Alcotest.check ok_bool "U*V" (Ok false) (Crypt.verify ~hash:bcrypt_uu "U*V");
        match Crypt.hash ~key:"pw" ~setting:"$2b$04$abcdefghijklmnopqrstuu" with
        | Error e -> Alcotest.fail e
        | Ok h ->
            Alcotest.(check string) "method kept" "$2b$04$" (String.sub h 0 7);
            Alcotest.check ok_bool "verifies" (Ok true) (Crypt.verify ~hash:h "pw"));
    Alcotest.test_case "Apache MD5 ($apr1$) and MD5-crypt ($1$) of openssl passwd, made now (issue 34)" `Quick
      (fun () ->
        let salts = [ "abcdefgh"; "x"; "./Az09" ] and pws = [ "secret"; ""; "a much longer password than sixteen"; "p\xc3\xa4ss" ] in
        List.iter
          (fun flag ->
            List.iter
              (fun salt ->
                List.iter
                  (fun pw ->
                    let h = openssl_passwd flag salt pw in
                    Alcotest.check ok_bool (Printf.sprintf "%s %S %S: %s" flag salt pw h) (Ok true) (Crypt.verify ~hash:h pw);
                    Alcotest.check ok_bool "wrong" (Ok false) (Crypt.verify ~hash:h (pw ^ "x"));
                    Alcotest.(check bool) "supported" true (Crypt.supported h))
                  pws)
              salts)
          [ "-apr1"; "-1" ];
        (* Known value, so the check above is not only self-consistent. *)
        Alcotest.check ok_bool "fixed vector" (Ok true) (Crypt.verify ~hash:"$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/" "secret");
        List.iter
          (fun bad ->
            match Crypt.hash ~key:"x" ~setting:bad with
            | Ok h -> Alcotest.failf "%S hashed: %s" bad h
            | Error e -> Alcotest.(check bool) (bad ^ ": EINVAL: " ^ e) true (T.find_sub e "EINVAL" >= 0))
          [ "$apr1$"; "$apr1$$h9FWgUz3n9YxylKLlR5SQ/"; "$apr1$abcdefghi$h9FWgUz3n9YxylKLlR5SQ/"; "$apr1$abc$short";
            "$apr1$abc$h9FWgUz3n9YxylKLlR5SQ*" ];
        match Crypt.hash ~key:"a\000b" ~setting:"$apr1$abc" with
        | Ok _ -> Alcotest.fail "a NUL in the key was hashed"
        | Error e -> Alcotest.(check bool) e true (T.find_sub e "EINVAL" >= 0));
    Alcotest.test_case "malformed setting and NUL: EINVAL" `Quick (fun () ->
        (match Crypt.hash ~key:"x" ~setting:"$9$nonsense" with
         | Ok h -> Alcotest.failf "hashed: %s" h
         | Error e -> Alcotest.(check bool) ("EINVAL: " ^ e) true (T.find_sub e "EINVAL" >= 0));
        match Crypt.hash ~key:"a\000b" ~setting:sha512 with
        | Ok _ -> Alcotest.fail "a NUL in the key was hashed"
        | Error e -> Alcotest.(check bool) e true (T.find_sub e "EINVAL" >= 0));
  ]

(* {1 Addresses} *)

let ip s =
  let b = Bytes.make 16 '\000' in
  (match Ipaddr.of_string_exn s with
   | Ipaddr.V4 a ->
       Bytes.set b 10 '\255';
       Bytes.set b 11 '\255';
       Bytes.blit_string (Ipaddr.V4.to_octets a) 0 b 12 4
   | Ipaddr.V6 a -> Bytes.blit_string (Ipaddr.V6.to_octets a) 0 b 0 16);
  b

let rules l =
  match Address_rules.compile l with Ok t -> t | Error e -> Alcotest.fail e

let rules_tests =
  let open Address_rules in
  [
    Alcotest.test_case "first match wins, as nginx" `Quick (fun () ->
        let t = rules [ (Deny, "192.168.1.1"); (Allow, "192.168.1.0/24"); (Allow, "10.1.1.0/16");
                        (Allow, "2001:db8::/32"); (Deny, "all") ] in
        List.iter
          (fun (a, want) -> Alcotest.(check bool) a want (allowed t (ip a)))
          [ ("192.168.1.1", false); ("192.168.1.2", true); ("192.168.2.1", false);
            ("10.1.200.7", true); ("10.2.0.1", false); ("2001:db8:1::5", true);
            ("2001:db9::1", false); ("::1", false); ("::ffff:192.168.1.9", true) ]);
    Alcotest.test_case "no rule matches: allowed; empty: everyone" `Quick (fun () ->
        let t = rules [ (Deny, "10.0.0.0/8") ] in
        Alcotest.(check bool) "other" true (allowed t (ip "11.0.0.1"));
        Alcotest.(check bool) "denied" false (allowed t (ip "10.9.9.9"));
        Alcotest.(check bool) "empty" true (allowed Address_rules.empty (ip "10.9.9.9")));
    Alcotest.test_case "prefix lengths at every bit" `Quick (fun () ->
        for bits = 0 to 32 do
          let t = rules [ (Allow, Printf.sprintf "128.0.0.0/%d" bits); (Deny, "all") ] in
          (* The last bit of the prefix set: outside; the first bit after
             it set: inside. *)
          let addr bit = Ipaddr.V4.(to_string (of_int32 Int32.(logor 0x80000000l (shift_left 1l bit)))) in
          if bits >= 2 then
            Alcotest.(check bool) (Printf.sprintf "/%d %s" bits (addr (32 - bits))) false (allowed t (ip (addr (32 - bits))));
          if bits >= 1 && bits < 31 then
            Alcotest.(check bool) (Printf.sprintf "/%d %s" bits (addr (31 - bits))) true (allowed t (ip (addr (31 - bits))));
          Alcotest.(check bool) "other half" (bits = 0) (allowed t (ip "1.2.3.4"))
        done;
        let t = rules [ (Allow, "fe80::/10"); (Deny, "all") ] in
        Alcotest.(check bool) "fe80::1" true (allowed t (ip "fe80::1"));
        Alcotest.(check bool) "febf::1" true (allowed t (ip "febf::1"));
        Alcotest.(check bool) "fec0::1" false (allowed t (ip "fec0::1")));
    Alcotest.test_case "errors name the rule" `Quick (fun () ->
        (match compile [ (Allow, "10.0.0.0/8"); (Deny, "10.0.0.0/33") ] with
         | Ok _ -> Alcotest.fail "accepted /33"
         | Error e -> Alcotest.(check bool) e true (T.find_sub e "deny 10.0.0.0/33" = 0));
        (match parse_rule "permit:1.2.3.4" with
         | Ok _ -> Alcotest.fail "permit accepted"
         | Error _ -> ());
        Alcotest.(check bool) "ipv6 rule" true (parse_rule "deny:::1/128" = Ok (Deny, "::1/128")));
    T.zero_alloc "allowed: 0 words" (let t = rules [ (Deny, "10.0.0.0/8"); (Allow, "::/0") ] and a = ip "192.0.2.1" in
                                     fun () -> ignore (Sys.opaque_identity (allowed t a)));
  ]

(* {1 Rate} *)

let s = 1_000_000_000
let t0 = 1_000 * s

(* The tables' hash before issue 34: unkeyed, so anyone could compute
   which addresses share a neighbourhood. *)
let unkeyed_hash a b c =
  let h = (a * 0x9E3779B1) lxor (b * 0x85EBCA77) lxor (c * 0xC2B2AE3D) in
  (h lxor (h lsr 29)) land max_int

let v4 x =
  let b = Bytes.make 16 '\000' in
  Bytes.set b 10 '\255';
  Bytes.set b 11 '\255';
  Bytes.set b 12 '\127';
  Bytes.set b 13 (Char.chr ((x lsr 16) land 255));
  Bytes.set b 14 (Char.chr ((x lsr 8) land 255));
  Bytes.set b 15 (Char.chr (x land 255));
  b

(* [n] addresses of 127/8 (from 127.0.0.2 on) whose keys [hash] puts on
   one entry of a table of [mask + 1], as an attacker would pick them. *)
let colliding ~n ~mask hash =
  let at a = hash (Client_key.high a) (Client_key.middle a) (Client_key.low a) land mask in
  let target = at (v4 2) in
  let found = ref [ v4 2 ] and x = ref 3 in
  while List.length !found < n do
    let a = v4 !x in
    if at a = target then found := a :: !found;
    incr x
  done;
  Array.of_list (List.rev !found)

let show a = Ipaddr.V4.to_string (Ipaddr.V4.of_octets_exn (Bytes.sub_string a 12 4))

let rate_tests =
  [
    Alcotest.test_case "burst, then the rate; Retry-After counts up" `Quick (fun () ->
        let r = Rate_limit.create ~rate:2. ~burst:3 ~entries:64 in
        let a = ip "198.51.100.7" in
        for i = 1 to 3 do Alcotest.(check int) (Printf.sprintf "burst %d" i) 0 (Rate_limit.admit r a ~now_ns:t0) done;
        Alcotest.(check int) "4th at once: wait" 1 (Rate_limit.admit r a ~now_ns:t0);
        Alcotest.(check int) "refusal not counted" 1 (Rate_limit.admit r a ~now_ns:t0);
        Alcotest.(check int) "half a second later: one more" 0 (Rate_limit.admit r a ~now_ns:(t0 + (s / 2)));
        Alcotest.(check int) "and no more" 1 (Rate_limit.admit r a ~now_ns:(t0 + (s / 2)));
        Alcotest.(check int) "another client is not affected" 0
          (Rate_limit.admit r (ip "198.51.100.8") ~now_ns:t0));
    Alcotest.test_case "a client over the rate gets it, one under gets everything" `Quick (fun () ->
        (* 10 per second, burst 5; over 10 s one client sends 100/s, the
           other 5/s. *)
        let r = Rate_limit.create ~rate:10. ~burst:5 ~entries:64 in
        let fast = ip "2001:db8::1" and slow = ip "203.0.113.5" in
        let fast_ok = ref 0 and slow_refused = ref 0 in
        for ms = 0 to 9_999 do
          let now_ns = t0 + (ms * 1_000_000) in
          if ms mod 10 = 0 && Rate_limit.admit r fast ~now_ns = 0 then incr fast_ok;
          if ms mod 200 = 0 && Rate_limit.admit r slow ~now_ns <> 0 then incr slow_refused
        done;
        Alcotest.(check bool) (Printf.sprintf "fast got %d (10 s at 10/s + burst)" !fast_ok) true
          (!fast_ok >= 100 && !fast_ok <= 106);
        Alcotest.(check int) "slow refused" 0 !slow_refused);
    Alcotest.test_case "an IPv6 client is its /64" `Quick (fun () ->
        let r = Rate_limit.create ~rate:1. ~burst:1 ~entries:64 in
        Alcotest.(check int) "first" 0 (Rate_limit.admit r (ip "2001:db8:0:1::1") ~now_ns:t0);
        Alcotest.(check bool) "same /64" true (Rate_limit.admit r (ip "2001:db8:0:1::ffff") ~now_ns:t0 > 0);
        Alcotest.(check int) "other /64" 0 (Rate_limit.admit r (ip "2001:db8:0:2::1") ~now_ns:t0));
    Alcotest.test_case "ten thousand addresses: a fixed table, the limit still holds" `Quick (fun () ->
        let r = Rate_limit.create ~rate:1. ~burst:2 ~entries:1024 in
        let victim = ip "192.0.2.1" in
        Alcotest.(check int) "victim 1" 0 (Rate_limit.admit r victim ~now_ns:t0);
        Alcotest.(check int) "victim 2" 0 (Rate_limit.admit r victim ~now_ns:t0);
        let no_room = ref 0 in
        for i = 0 to 9_999 do
          let a = ip (Printf.sprintf "10.%d.%d.1" (i / 256) (i mod 256)) in
          if Rate_limit.admit r a ~now_ns:t0 < 0 then incr no_room
        done;
        Alcotest.(check int) "entries" 1024 (Rate_limit.entries r);
        Alcotest.(check bool) "tracked within the table" true (Rate_limit.tracked r ~now_ns:t0 <= 1024);
        Alcotest.(check bool) (Printf.sprintf "the rest found no room (%d)" !no_room) true (!no_room >= 10_000 - 1023);
        (* Forgetting a live client would hand it a fresh burst: the
           victim is still limited, and a newcomer waits for room. *)
        Alcotest.(check int) "the victim is still limited" 1 (Rate_limit.admit r victim ~now_ns:t0);
        Alcotest.(check int) "a new client: no room for 1 s" (-1) (Rate_limit.admit r (ip "192.0.2.99") ~now_ns:t0);
        Alcotest.(check int) "a second later, room again" 0 (Rate_limit.admit r (ip "192.0.2.99") ~now_ns:(t0 + s)));
    Alcotest.test_case "9 addresses colliding under the unkeyed hash stay limited (issue 34)" `Quick (fun () ->
        (* Before: 9 clients in 8 probed entries evicted each other, and
           each came back with a fresh burst: 180 of 180 passed. *)
        let r = Rate_limit.create ~rate:1. ~burst:1 ~entries:16384 in
        let addrs = colliding ~n:9 ~mask:16383 unkeyed_hash in
        let passed = Array.make 9 0 in
        for round = 0 to 19 do
          Array.iteri
            (fun i a -> if Rate_limit.admit r a ~now_ns:(t0 + (round * s / 10)) = 0 then passed.(i) <- passed.(i) + 1)
            addrs
        done;
        (* 1.9 s at 1 r/s, burst 1: 2 each at most. *)
        Array.iteri
          (fun i n -> Alcotest.(check bool) (Printf.sprintf "%s: %d of 20" (show addrs.(i)) n) true (n >= 1 && n <= 2))
          passed);
    Alcotest.test_case "the secret places keys: two tables, two placements" `Quick (fun () ->
        let k = Client_key.secret_of_ints 0x1234 0x5678 in
        let h sec a = Client_key.hash sec (Client_key.high a) (Client_key.middle a) (Client_key.low a) in
        (* HalfSipHash-2-4's reference vector for 16 bytes 00..0f under
           the key 00..07: d9 b5 ac 84 (vectors_hsip32[16]). *)
        Alcotest.(check int) "the reference vector" 0x84acb5d9
          (Client_key.hash (Client_key.secret_of_ints 0x03020100 0x07060504) 0x03020100 0x07060504
             (0x0b0a0908 lor (0x0f0e0d0c lsl 32)));
        Alcotest.(check int) "same secret, same place" (h k (v4 7)) (h (Client_key.secret_of_ints 0x1234 0x5678) (v4 7));
        let a = Client_key.secret () and b = Client_key.secret () in
        let same = ref 0 in
        for x = 0 to 999 do
          if h a (v4 x) land 16383 = h b (v4 x) land 16383 then incr same
        done;
        Alcotest.(check bool) (Printf.sprintf "fresh secrets agree on %d of 1000" !same) true (!same < 10);
        let old = colliding ~n:9 ~mask:16383 unkeyed_hash in
        let places = List.sort_uniq compare (Array.to_list (Array.map (fun x -> h a x land 16383) old)) in
        Alcotest.(check bool) "the unkeyed collisions are spread" true (List.length places >= 8);
        Array.iter (fun x -> Alcotest.(check bool) "32 bits" true (h a x >= 0 && h a x < 1 lsl 32)) old);
    Alcotest.test_case "a full neighbourhood refuses: no client evicts another (issue 34)" `Quick (fun () ->
        let secret = Client_key.secret_of_ints 0x0bad 0xcafe in
        let r = Rate_limit.create_keyed ~secret ~rate:1. ~burst:2 ~entries:1024 in
        let addrs = colliding ~n:17 ~mask:1023 (Client_key.hash secret) in
        for i = 0 to 15 do Alcotest.(check int) (show addrs.(i)) 0 (Rate_limit.admit r addrs.(i) ~now_ns:t0) done;
        Alcotest.(check int) "the 17th: no room, for 1 s" (-1) (Rate_limit.admit r addrs.(16) ~now_ns:t0);
        (* All 17 keep asking, every 100 ms, for 10 s. *)
        let passed = Array.make 17 0 in
        for i = 0 to 15 do passed.(i) <- 1 done;
        for tick = 1 to 100 do
          Array.iteri
            (fun i a ->
              let w = Rate_limit.admit r a ~now_ns:(t0 + (tick * s / 10)) in
              if w = 0 then passed.(i) <- passed.(i) + 1
              else if i = 16 && w > 0 then Alcotest.fail "the 17th was counted")
            addrs
        done;
        Array.iteri
          (fun i n ->
            Alcotest.(check bool) (Printf.sprintf "%s: %d in 10 s (burst 2 + 10)" (show addrs.(i)) n) true (n <= 12))
          passed;
        Alcotest.(check int) "the 17th never got in" 0 passed.(16);
        (* Once the others stop and their entries expire: room. *)
        Alcotest.(check int) "after they stop" 0 (Rate_limit.admit r addrs.(16) ~now_ns:(t0 + (13 * s))));
    T.zero_alloc "admit refused, over the rate and no room: 0 words"
      (let r = Rate_limit.create ~rate:0.001 ~burst:1 ~entries:16 in
       for x = 0 to 15 do ignore (Rate_limit.admit r (v4 x) ~now_ns:t0) done;
       let member = v4 3 and outsider = v4 99 in
       if Rate_limit.admit r outsider ~now_ns:t0 >= 0 then Alcotest.fail "room in a full table";
       fun () ->
         ignore (Sys.opaque_identity (Rate_limit.admit r member ~now_ns:t0));
         ignore (Sys.opaque_identity (Rate_limit.admit r outsider ~now_ns:t0)));
    T.zero_alloc "admit: 0 words"
      (let r = Rate_limit.create ~rate:1e9 ~burst:1000 ~entries:64 and a = ip "192.0.2.1" and now = ref t0 in
       fun () ->
         now := !now + 10;
         ignore (Sys.opaque_identity (Rate_limit.admit r a ~now_ns:!now)));
  ]

(* {1 Connections} *)

let conn_tests =
  [
    Alcotest.test_case "per client, released by slot" `Quick (fun () ->
        let t = Conn_limit.create ~per_client:2 ~slots:8 in
        let a = ip "192.0.2.1" and b = ip "192.0.2.2" in
        Alcotest.(check bool) "a 1" true (Conn_limit.acquire t ~slot:0 a);
        Alcotest.(check bool) "a 2" true (Conn_limit.acquire t ~slot:1 a);
        Alcotest.(check bool) "a 3 refused" false (Conn_limit.acquire t ~slot:2 a);
        Alcotest.(check bool) "b 1" true (Conn_limit.acquire t ~slot:2 b);
        Alcotest.(check int) "a counted" 2 (Conn_limit.count t a);
        Conn_limit.release t ~slot:0;
        Conn_limit.release t ~slot:0;
        Alcotest.(check int) "released once" 1 (Conn_limit.count t a);
        Alcotest.(check bool) "a again" true (Conn_limit.acquire t ~slot:0 a);
        Conn_limit.release t ~slot:5;
        Alcotest.(check int) "an uncounted slot releases nothing" 2 (Conn_limit.count t a));
    Alcotest.test_case "many clients over few slots stay bounded" `Quick (fun () ->
        let slots = 64 in
        let t = Conn_limit.create ~per_client:1 ~slots in
        for i = 0 to 99_999 do
          let slot = i mod slots in
          Conn_limit.release t ~slot;
          ignore (Conn_limit.acquire t ~slot (ip (Printf.sprintf "10.%d.%d.%d" (i lsr 16) ((i lsr 8) land 255) (i land 255))))
        done;
        for slot = 0 to slots - 1 do Conn_limit.release t ~slot done;
        Alcotest.(check int) "all released" 0 (Conn_limit.count t (ip "10.1.134.159")));
    Alcotest.test_case "16 addresses colliding under the unkeyed hash: a 17th still held to 2 (issue 34)" `Quick
      (fun () ->
        (* Before: 16 clients filled the 16 probed entries, and the 17th
           was let in uncounted: 50 connections at a limit of 2. *)
        let t = Conn_limit.create ~per_client:2 ~slots:64 in
        let addrs = colliding ~n:17 ~mask:255 unkeyed_hash in
        for i = 0 to 15 do Alcotest.(check bool) (show addrs.(i)) true (Conn_limit.acquire t ~slot:i addrs.(i)) done;
        let held = ref 0 in
        for slot = 16 to 63 do if Conn_limit.acquire t ~slot addrs.(16) then incr held done;
        Alcotest.(check int) "the 17th holds 2 of 48" 2 !held;
        Alcotest.(check int) "counted" 2 (Conn_limit.count t addrs.(16)));
    Alcotest.test_case "a crowded neighbourhood refuses, never lets in uncounted (issue 34)" `Quick (fun () ->
        let secret = Client_key.secret_of_ints 0xfeed 0xf00d in
        let t = Conn_limit.create_keyed ~secret ~per_client:2 ~slots:64 in
        let addrs = colliding ~n:17 ~mask:255 (Client_key.hash secret) in
        for i = 0 to 15 do Alcotest.(check bool) (show addrs.(i)) true (Conn_limit.acquire t ~slot:i addrs.(i)) done;
        for slot = 16 to 63 do
          Alcotest.(check bool) "the 17th: no entry, refused" false (Conn_limit.acquire t ~slot addrs.(16))
        done;
        Alcotest.(check int) "nothing counted" 0 (Conn_limit.count t addrs.(16));
        Conn_limit.release t ~slot:3;
        Alcotest.(check bool) "one left: room" true (Conn_limit.acquire t ~slot:16 addrs.(16));
        Alcotest.(check bool) "the one that left: no room now" false (Conn_limit.acquire t ~slot:17 addrs.(3)));
    T.zero_alloc "acquire refused, neighbourhood full: 0 words"
      (let secret = Client_key.secret_of_ints 1 2 in
       let t = Conn_limit.create_keyed ~secret ~per_client:1 ~slots:64 in
       let addrs = colliding ~n:17 ~mask:255 (Client_key.hash secret) in
       for i = 0 to 15 do ignore (Conn_limit.acquire t ~slot:i addrs.(i)) done;
       fun () -> ignore (Sys.opaque_identity (Conn_limit.acquire t ~slot:20 addrs.(16))));
    T.zero_alloc "acquire and release: 0 words"
      (let t = Conn_limit.create ~per_client:4 ~slots:8 and a = ip "2001:db8::1" in
       fun () ->
         ignore (Sys.opaque_identity (Conn_limit.acquire t ~slot:3 a));
         Conn_limit.release t ~slot:3);
  ]

(* {1 Basic authentication} *)

let b64 s =
  let tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/" in
  let b = Buffer.create 64 in
  let n = String.length s in
  let i = ref 0 in
  while !i < n do
    let c k = if !i + k < n then Char.code s.[!i + k] else 0 in
    let v = (c 0 lsl 16) lor (c 1 lsl 8) lor c 2 in
    Buffer.add_char b tbl.[v lsr 18];
    Buffer.add_char b tbl.[(v lsr 12) land 63];
    Buffer.add_char b (if !i + 1 < n then tbl.[(v lsr 6) land 63] else '=');
    Buffer.add_char b (if !i + 2 < n then tbl.[v land 63] else '=');
    i := !i + 3
  done;
  Buffer.contents b

let field s = (Bigstring.of_string s, Span.make ~off:0 ~len:(String.length s))

let auth () =
  match Basic_auth.of_users ~realm:"admin area" [ ("alice", sha512); ("bob", sha256); ("carol", bcrypt_uu) ] with
  | Ok t -> t
  | Error e -> Alcotest.fail e

let verdict =
  Alcotest.testable
    (fun f v -> Format.pp_print_string f (match v with Basic_auth.Granted -> "Granted" | Missing -> "Missing" | Refused -> "Refused"))
    ( = )

let check_auth t s = let b, sp = field s in Basic_auth.check t b sp

let auth_tests =
  [
    Alcotest.test_case "right, wrong, missing, malformed" `Quick (fun () ->
        let t = auth () in
        Alcotest.check verdict "alice" Basic_auth.Granted (check_auth t ("Basic " ^ b64 "alice:secret"));
        Alcotest.check verdict "bob, scheme case" Basic_auth.Granted (check_auth t ("basic  " ^ b64 "bob:secret"));
        Alcotest.check verdict "carol bcrypt" Basic_auth.Granted (check_auth t ("Basic " ^ b64 "carol:U*U"));
        Alcotest.check verdict "wrong password" Basic_auth.Refused (check_auth t ("Basic " ^ b64 "alice:Secret"));
        Alcotest.check verdict "unknown user" Basic_auth.Refused (check_auth t ("Basic " ^ b64 "mallory:secret"));
        Alcotest.check verdict "no colon" Basic_auth.Refused (check_auth t ("Basic " ^ b64 "alicesecret"));
        Alcotest.check verdict "not base64" Basic_auth.Refused (check_auth t "Basic a*b=");
        Alcotest.check verdict "bearer" Basic_auth.Missing (check_auth t "Bearer abc");
        Alcotest.check verdict "absent" Basic_auth.Missing (Basic_auth.check t (Bigstring.create 0) Span.empty);
        Alcotest.check verdict "too long" Basic_auth.Refused
          (check_auth t ("Basic " ^ b64 ("alice:" ^ String.make 300 'x')));
        Alcotest.(check string) "challenge" "Basic realm=\"admin area\", charset=\"UTF-8\"" (Basic_auth.challenge t));
    Alcotest.test_case "htpasswd's default $apr1$ user file is accepted (issue 34)" `Quick (fun () ->
        let h = openssl_passwd "-apr1" "s4ltS4lt" "wonderland" in
        match Basic_auth.of_users ~realm:"r" [ ("alice", h); ("bob", openssl_passwd "-1" "x" "builder") ] with
        | Error e -> Alcotest.fail e
        | Ok t ->
            Alcotest.check verdict "alice" Basic_auth.Granted (check_auth t ("Basic " ^ b64 "alice:wonderland"));
            Alcotest.check verdict "alice wrong" Basic_auth.Refused (check_auth t ("Basic " ^ b64 "alice:wonderlanD"));
            Alcotest.check verdict "bob" Basic_auth.Granted (check_auth t ("BASIC " ^ b64 "bob:builder"));
            Alcotest.check verdict "bob wrong" Basic_auth.Refused (check_auth t ("basic " ^ b64 "bob:Builder")));
    Alcotest.test_case "a wrong password after a right one is still wrong" `Quick (fun () ->
        let t = auth () in
        Alcotest.check verdict "right" Basic_auth.Granted (check_auth t ("Basic " ^ b64 "alice:secret"));
        Alcotest.check verdict "wrong" Basic_auth.Refused (check_auth t ("Basic " ^ b64 "alice:secreT"));
        Alcotest.check verdict "right again" Basic_auth.Granted (check_auth t ("Basic " ^ b64 "alice:secret")));
    Alcotest.test_case "user files: errors name the line" `Quick (fun () ->
        let file text =
          let p = Filename.temp_file "users" ".txt" in
          let oc = open_out p in
          output_string oc text;
          close_out oc;
          p
        in
        let err text =
          let p = file text in
          match Basic_auth.load ~realm:"r" p with Ok _ -> Alcotest.failf "accepted %S" text | Error e -> Sys.remove p; (p, e)
        in
        let p, e = err "# users\nalice:$3$xyz$abc\n" in
        Alcotest.(check string) "unknown" (p ^ ":2: user alice: $3$ hashes are not supported (use bcrypt, htpasswd -B, or SHA-crypt, openssl passwd -6; Apache MD5 and MD5-crypt are accepted)") e;
        let p, e = err "# users\nalice:$apr1$xyz$abc\n" in
        Alcotest.(check bool) e true (T.find_sub e (p ^ ":2: user alice: the hash is malformed (EINVAL") = 0);
        let p, e = err "alice:plain\n" in
        Alcotest.(check bool) e true (T.find_sub e (p ^ ":1: user alice: plain text") = 0);
        let p, e = err "\nbob\n" in
        Alcotest.(check string) "no colon" (p ^ ":2: give user:hash") e;
        let p, e = err ("a:" ^ sha256 ^ "\na:" ^ sha512 ^ "\n") in
        Alcotest.(check string) "twice" (p ^ ":2: user a is listed twice") e;
        (match Basic_auth.load ~realm:"r" "/nonexistent/users" with
         | Ok _ -> Alcotest.fail "missing file"
         | Error e -> Alcotest.(check bool) e true (T.find_sub e "No such file" >= 0));
        let p = file ("# c\n\nalice:" ^ sha512 ^ "\n") in
        (match Basic_auth.load ~realm:"r" p with
         | Ok t -> Alcotest.(check int) "users" 1 (Basic_auth.user_count t)
         | Error e -> Alcotest.fail e);
        match Basic_auth.load ~realm:"a\"b" p with
        | Ok _ -> Alcotest.fail "quote in realm"
        | Error _ -> Sys.remove p);
    T.zero_alloc "a remembered pair: 0 words"
      (let t = auth () in
       let b, sp = field ("Basic " ^ b64 "alice:secret") in
       ignore (Basic_auth.check t b sp);
       fun () -> ignore (Sys.opaque_identity (Basic_auth.check t b sp)));
  ]

(* {1 The guard} *)

let guard_tests =
  let make ?(entries = 64) ?(rate = 1.) () =
    match
      Guard.create ~rate_entries:entries
        { Guard.access = [ (Address_rules.Deny, "192.0.2.66"); (Allow, "all") ];
          rate = Some { Guard.per_second = rate; burst = 2 };
          auth = None; zone = Guard.default_zone }
    with
    | Ok g -> g
    | Error e -> Alcotest.fail e
  in
  let pp f v =
    Format.pp_print_string f
      (match v with
       | Guard.Admit -> "Admit"
       | Forbidden -> "Forbidden"
       | Unauthorized -> "Unauthorized"
       | Too_many -> "Too_many"
       | Unavailable -> "Unavailable")
  in
  let v = Alcotest.testable pp ( = ) in
  let empty = Bigstring.create 0 in
  [
    Alcotest.test_case "deny before the rate, the rate counts passes only" `Quick (fun () ->
        let g = make () in
        let bad = ip "192.0.2.66" and good = ip "192.0.2.67" in
        for _ = 1 to 5 do Alcotest.check v "denied" Guard.Forbidden (Guard.decide g ~addr:bad ~now_ns:t0 empty Span.empty) done;
        Alcotest.check v "1" Guard.Admit (Guard.decide g ~addr:good ~now_ns:t0 empty Span.empty);
        Alcotest.check v "2" Guard.Admit (Guard.decide g ~addr:good ~now_ns:t0 empty Span.empty);
        Alcotest.check v "3" Guard.Too_many (Guard.decide g ~addr:good ~now_ns:t0 empty Span.empty);
        Alcotest.(check int) "retry after" 1 (Guard.retry_after g));
    Alcotest.test_case "no room in the rate table: Unavailable, with the wait" `Quick (fun () ->
        let g = make ~entries:16 ~rate:0.1 () in
        for x = 0 to 15 do Alcotest.check v "fills" Guard.Admit (Guard.decide g ~addr:(v4 x) ~now_ns:t0 empty Span.empty) done;
        Alcotest.check v "17th" Guard.Unavailable (Guard.decide g ~addr:(v4 16) ~now_ns:t0 empty Span.empty);
        Alcotest.(check int) "until the first expires: 10 s" 10 (Guard.retry_after g);
        Alcotest.check v "denied first" Guard.Forbidden (Guard.decide g ~addr:(ip "192.0.2.66") ~now_ns:t0 empty Span.empty));
    Alcotest.test_case "configuration errors" `Quick (fun () ->
        let bad c = match Guard.create c with Ok _ -> Alcotest.fail "accepted" | Error e -> e in
        Alcotest.(check string) "rate" "rate 0: must be a positive number of requests per second"
          (bad { Guard.none with rate = Some { Guard.per_second = 0.; burst = 1 } });
        Alcotest.(check string) "burst" "burst 0: must be at least 1"
          (bad { Guard.none with rate = Some { Guard.per_second = 1.; burst = 0 } });
        Alcotest.(check bool) "none" true (Guard.is_none Guard.none));
    T.zero_alloc "a request that passes every check: 0 words"
      (let users = Filename.temp_file "users" ".txt" in
       let oc = open_out users in
       output_string oc ("alice:" ^ sha256 ^ "\n");
       close_out oc;
       let g =
         match
           Guard.create ~rate_entries:64
             { Guard.access = [ (Address_rules.Deny, "10.0.0.0/8"); (Allow, "all") ];
               rate = Some { Guard.per_second = 1e9; burst = 1000 };
               auth = Some { Guard.realm = "r"; user_file = users }; zone = Guard.default_zone }
         with
         | Ok g -> Sys.remove users; g
         | Error e -> Alcotest.fail e
       in
       let b, sp = field ("Basic " ^ b64 "alice:secret") and a = ip "192.0.2.1" and now = ref t0 in
       if Guard.decide g ~addr:a ~now_ns:!now b sp <> Guard.Admit then Alcotest.fail "not passed";
       fun () ->
         now := !now + 10;
         match Guard.decide g ~addr:a ~now_ns:!now b sp with Guard.Admit -> () | _ -> failwith "refused");
  ]

(* {1 The guard in front of a handler, through the HTTP/1.1 machine} *)

(* The whole exchange with every check on (address rules, a rate, a
   remembered password), as test/server/h1's cycle: no word allocated. *)
let guarded_cycle ?(zone = Guard.default_zone) ?(fields = "") label () =
  let users = Filename.temp_file "users" ".txt" in
  let oc = open_out users in
  output_string oc ("alice:" ^ sha256 ^ "\n");
  close_out oc;
  let g =
    match
      Guard.create ~rate_entries:64
        { Guard.access = [ (Address_rules.Deny, "10.0.0.0/8"); (Allow, "all") ];
          rate = Some { Guard.per_second = 1e9; burst = 1_000_000 };
          auth = Some { Guard.realm = "r"; user_file = users }; zone }
    with
    | Ok g -> Sys.remove users; g
    | Error e -> Alcotest.fail e
  in
  let sh =
    Slot.create_shared ~server_name:"t" ~read_buffer:4096 ~write_buffer:1024 ~max_body:4096
      ~header_ms:1000 ~idle_ms:2000 ~body_ms:1000 ~write_ms:1000 ~handler_ms:3000 ~headers:""
      ~listener_headers:[| "" |] ~keep:4
  in
  let passed = ref 0 in
  let app c = incr passed; Ctx.start c Status.Ok; Ctx.body_string c "ok" in
  let front = Guard.under ~prefix:"/admin" g ~app in
  sh.hooks.handler <- (fun c -> front (Ctx.of_conn c));
  sh.hooks.app <- (fun c -> app (Ctx.of_conn c));
  let c = Slot.create sh ~slot:0 ~peer:false in
  let req =
    Bigstring.of_string
      ("GET /admin/x HTTP/1.1\r\nHost: t\r\n" ^ fields ^ "Authorization: Basic " ^ b64 "alice:secret" ^ "\r\n\r\n")
  in
  let n = Bigstring.length req in
  let rec go (a : H1.action) =
    match a with
    | Write ->
        Output.advance c (Output.pending c);
        go (H1.written c)
    | Read | Close | Linger | Wait | Detach | Nothing | Read_buffered | Push -> a
  in
  ignore (H1.opened c ~fd:(-1) ~listener:0 ~peer_len:0 : H1.action);
  let cycle () =
    let before = !passed in
    (match H1.prepare_read c with
     | Read ->
         Bigstring.blit ~src:req ~src_off:0 ~dst:c.in_buf ~dst_off:c.in_off ~len:n;
         ignore (go (H1.received c n) : H1.action)
     | _ -> Alcotest.fail "not reading");
    if !passed <> before + 1 then Alcotest.fail "the guard refused the request"
  in
  cycle ();
  Alcotest.(check int) "passed to the application" 1 !passed;
  T.zero_alloc (label ^ ": 0 words") cycle

(* A connection from [peer] (16 bytes) to [handler], through the HTTP/1.1
   machine: [send req] is the head of the answer to [req]. *)
let capturing = ref true

let connection ~peer handler =
  let sh =
    Slot.create_shared ~server_name:"t" ~read_buffer:4096 ~write_buffer:1024 ~max_body:4096
      ~header_ms:1000 ~idle_ms:2000 ~body_ms:1000 ~write_ms:1000 ~handler_ms:3000 ~headers:""
      ~listener_headers:[| "" |] ~keep:4
  in
  sh.hooks.handler <- (fun c -> handler (Ctx.of_conn c));
  let c = Slot.create sh ~slot:0 ~peer:false in
  ignore (H1.opened c ~fd:(-1) ~listener:0 ~peer_len:0 : H1.action);
  Bytes.blit peer 0 c.peer_ip 0 16;
  c.peer_family <- 4;
  let rec go (a : H1.action) =
    match a with
    | Write ->
        Output.advance c (Output.pending c);
        go (H1.written c)
    | Read | Close | Linger | Wait | Detach | Nothing | Read_buffered | Push -> a
  in
  let head = ref "" in
  fun req ->
    let n = String.length req in
    (match H1.prepare_read c with
     | Read -> (
         Bigstring.blit_from_string req ~src_off:0 c.in_buf ~dst_off:c.in_off ~len:n;
         match H1.received c n with
         | Write ->
             if !capturing then head := Bigstring.sub_string c.out ~off:c.out_sent ~len:(c.out_len - c.out_sent);
             ignore (go Write : H1.action)
         | a -> ignore (go a : H1.action))
     | _ -> Alcotest.fail "not reading");
    !head

let has_line head line = T.find_sub head ("\r\n" ^ line ^ "\r\n") >= 0

let refusal_tests =
  let users = [ ("alice", sha256) ] in
  let guard ?(rate = 0.5) ?(entries = 64) ?(auth = true) () =
    let file = Filename.temp_file "users" ".txt" in
    let oc = open_out file in
    List.iter (fun (u, h) -> output_string oc (u ^ ":" ^ h ^ "\n")) users;
    close_out oc;
    match
      Guard.create ~rate_entries:entries
        { Guard.access = [ (Address_rules.Deny, "192.0.2.66"); (Allow, "all") ];
          rate = Some { Guard.per_second = rate; burst = 1 };
          auth = (if auth then Some { Guard.realm = "Staff"; user_file = file } else None); zone = Guard.default_zone }
    with
    | Ok g -> Sys.remove file; g
    | Error e -> Alcotest.fail e
  in
  let app c = Ctx.start c Status.Ok; Ctx.body_string c "ok" in
  let get = "GET / HTTP/1.1\r\nHost: t\r\n\r\n" in
  let get_as pw = "GET / HTTP/1.1\r\nHost: t\r\nAuthorization: Basic " ^ b64 ("alice:" ^ pw) ^ "\r\n\r\n" in
  [
    Alcotest.test_case "answers: 403 bare, 401 with its challenge, 429 and 503 with Retry-After" `Quick (fun () ->
        let g = guard () in
        let denied = connection ~peer:(ip "192.0.2.66") (Guard.handler g ~app) in
        let h = denied get in
        Alcotest.(check bool) h true (T.find_sub h "HTTP/1.1 403 " = 0 && not (has_line h "Retry-After: 1"));
        let send = connection ~peer:(ip "192.0.2.7") (Guard.handler g ~app) in
        let h = send get in
        Alcotest.(check bool) h true
          (T.find_sub h "HTTP/1.1 401 " = 0 && has_line h "WWW-Authenticate: Basic realm=\"Staff\", charset=\"UTF-8\"");
        let h = send (get_as "secret") in
        Alcotest.(check bool) h true (T.find_sub h "HTTP/1.1 429 " = 0 && has_line h "Retry-After: 2");
        let g = guard ~entries:16 ~auth:false () in
        for x = 0 to 15 do
          let h = connection ~peer:(v4 x) (Guard.handler g ~app) get in
          Alcotest.(check bool) h true (T.find_sub h "HTTP/1.1 200 " = 0)
        done;
        let h = connection ~peer:(v4 16) (Guard.handler g ~app) get in
        Alcotest.(check bool) h true (T.find_sub h "HTTP/1.1 503 " = 0 && has_line h "Retry-After: 2"));
    Alcotest.test_case "check and refuse: the verdict without the answer, then the answer" `Quick (fun () ->
        let g = guard ~auth:false () in
        let seen = ref [] in
        let handler c =
          let v = Guard.check g c in
          seen := v :: !seen;
          match v with
          | Guard.Admit -> app c
          | Too_many -> Ctx.start c Status.Bad_request; Ctx.body_string c "mine"
          | v -> Guard.refuse g c v
        in
        let send = connection ~peer:(ip "192.0.2.8") handler in
        let h = send get in
        Alcotest.(check bool) h true (T.find_sub h "HTTP/1.1 200 " = 0);
        let h = send get in
        Alcotest.(check bool) ("answered by the caller: " ^ h) true (T.find_sub h "HTTP/1.1 400 " = 0);
        Alcotest.(check bool) "verdicts" true (!seen = [ Guard.Too_many; Guard.Admit ]);
        Alcotest.(check int) "retry after" 2 (Guard.retry_after g);
        let h = connection ~peer:(ip "192.0.2.66") handler get in
        Alcotest.(check bool) h true (T.find_sub h "HTTP/1.1 403 " = 0));
    (let g = guard ~rate:1e-6 ~auth:false () in
     let send = connection ~peer:(ip "192.0.2.9") (Guard.handler g ~app) in
     ignore (send get);
     let h = send get in
     if T.find_sub h "HTTP/1.1 429 " <> 0 then Alcotest.failf "not refused: %s" h;
     T.zero_alloc "a refused request (429), through H1: 0 words" (fun () ->
         capturing := false;
         ignore (Sys.opaque_identity (send get));
         capturing := true));
  ]

let stats_tests =
  [
    Alcotest.test_case "the stats token: the scheme in any case, the token exactly (issue 34)" `Quick (fun () ->
        let app c = Ctx.start c Status.Not_found; Ctx.body_string c "app" in
        let h = Stats.handler ~credentials:"Bearer s3cr3t-T0ken" ~report:(fun _ -> "{}") ~app in
        let send = connection ~peer:(ip "192.0.2.1") h in
        let ask auth = send ("GET /__httpz/stats HTTP/1.1\r\nHost: t\r\nAuthorization: " ^ auth ^ "\r\n\r\n") in
        List.iter
          (fun auth ->
            let h = ask auth in
            Alcotest.(check bool) (auth ^ ": " ^ h) true (T.find_sub h "HTTP/1.1 200 " = 0))
          [ "Bearer s3cr3t-T0ken"; "bearer s3cr3t-T0ken"; "BEARER s3cr3t-T0ken"; "bEaReR   s3cr3t-T0ken" ];
        List.iter
          (fun auth ->
            let h = ask auth in
            Alcotest.(check bool) (auth ^ ": " ^ h) true (T.find_sub h "HTTP/1.1 404 " = 0))
          [ "Bearer s3cr3t-t0ken"; "Bearer s3cr3t-T0ke"; "Bearer s3cr3t-T0kenX"; "Bearers3cr3t-T0ken";
            "Basic s3cr3t-T0ken"; "s3cr3t-T0ken"; "Bearer" ]);
  ]

(* {1 Totals across processes} *)

let totals_tests =
  [
    Alcotest.test_case "rows per process, summed; a forked worker counts in its own" `Quick (fun () ->
        let t = Totals.create ~rows:4 in
        let row = Totals.claim t in
        Alcotest.(check int) "first row" 0 row;
        Alcotest.(check int) "claimed again: the same" 0 (Totals.claim t);
        Totals.response t row ~status:200 ~bytes:100;
        Totals.response t row ~status:404 ~bytes:50;
        Totals.response t row ~status:99 ~bytes:1;
        Totals.accepted t row;
        Totals.connections t row ~reading:1 ~writing:2 ~idle:3 ~handling:4;
        (match Unix.fork () with
         | 0 ->
             let r = Totals.claim t in
             Totals.response t r ~status:503 ~bytes:7;
             Totals.connections t r ~reading:10 ~writing:0 ~idle:0 ~handling:0;
             Unix._exit (if r = 1 then 0 else 3)
         | pid -> (
             match Unix.waitpid [] pid with
             | _, Unix.WEXITED 0 -> ()
             | _ -> Alcotest.fail "the child did not get row 1"));
        let s = Totals.summary t in
        Alcotest.(check (array int)) "by class" [| 0; 0; 1; 0; 1; 1 |] s.Totals.by_class;
        Alcotest.(check int) "bytes" 158 s.bytes_sent;
        Alcotest.(check int) "workers running (the child is gone)" 1 s.workers;
        Alcotest.(check int) "gauges of the running only" 1 s.reading;
        Alcotest.(check int) "handling" 4 s.handling;
        Alcotest.(check int) "accepted" 1 s.accepted_connections;
        (* A row whose process is gone is taken over, counters kept. *)
        (match Unix.fork () with
         | 0 -> Unix._exit (if Totals.claim t = 1 then 0 else 3)
         | pid -> (
             match Unix.waitpid [] pid with
             | _, Unix.WEXITED 0 -> ()
             | _ -> Alcotest.fail "the dead row was not taken over"));
        Alcotest.(check int) "still counted" 1 (Totals.summary t).by_class.(5);
        let text = Totals.text s and json = Totals.json s in
        Alcotest.(check bool) text true (T.find_sub text "responses_5xx 1\nresponses_total 3\n" >= 0);
        Alcotest.(check bool) json true (T.find_sub json "\"2xx\": 1, \"3xx\": 0, \"4xx\": 1, \"5xx\": 1}" >= 0));
    Alcotest.test_case "no row left: not counted" `Quick (fun () ->
        let t = Totals.create ~rows:1 in
        ignore (Totals.claim t);
        match Unix.fork () with
        | 0 -> Unix._exit (if Totals.claim t = -1 then 0 else 3)
        | pid -> (
            match Unix.waitpid [] pid with
            | _, Unix.WEXITED 0 -> Totals.response t (-1) ~status:200 ~bytes:1
            | _ -> Alcotest.fail "a second process shared the row"));
    T.zero_alloc "response and gauges: 0 words"
      (let t = Totals.create ~rows:2 in
       let row = Totals.claim t in
       fun () ->
         Totals.response t row ~status:200 ~bytes:612;
         Totals.accepted t row;
         Totals.connections t row ~reading:1 ~writing:2 ~idle:3 ~handling:4);
  ]

(* {1 Zones shared by processes} *)

(* [n] children run [f i] at once (released together); each one's result,
   a count, comes back through a shared word. *)
(* [n] children run [f] at one instant (a start barrier) and stay alive
   until every one of them is done (an end barrier): a child that exits
   early would let another take over its dead row of a shared table and
   clear it, mid-test. *)
let in_children n f =
  let words = Mapped.map_shared (8 * ((2 * n) + 1)) in
  let all_done () =
    let d = ref true in
    for j = 0 to n - 1 do if Bigstring.unsafe_get64 words (8 * (n + 1 + j)) = 0L then d := false done;
    !d
  in
  let pids =
    List.init n (fun i ->
        match Unix.fork () with
        | 0 ->
            while Int64.to_int (Bigstring.unsafe_get64 words (8 * n)) = 0 do () done;
            let r = (try f i with _ -> -1) in
            Bigstring.unsafe_set64 words (8 * i) (Int64.of_int r);
            Bigstring.unsafe_set64 words (8 * (n + 1 + i)) 1L;
            while not (all_done ()) do () done;
            Unix._exit 0
        | pid -> pid)
  in
  Bigstring.unsafe_set64 words (8 * n) 1L;
  List.iter (fun pid -> ignore (Unix.waitpid [] pid)) pids;
  List.init n (fun i -> Int64.to_int (Bigstring.unsafe_get64 words (8 * i)))

let zone_tests =
  let t0 = 1_000_000_000_000 in
  [ Alcotest.test_case "two processes, one client: the burst exactly, no update lost" `Quick (fun () ->
        (* Both hammer one client's entry at one instant: together they get
           the burst, not a request more (a lost update would let more in). *)
        let r = Rate_limit.create ~rate:1. ~burst:1_000_000 ~entries:64 in
        let a = ip "192.0.2.1" in
        let got =
          in_children 2 (fun _ ->
              let n = ref 0 in
              for _ = 1 to 800_000 do if Rate_limit.admit r a ~now_ns:t0 = 0 then incr n done;
              !n)
        in
        Alcotest.(check int) (Printf.sprintf "admitted in all (%s)" (String.concat " + " (List.map string_of_int got)))
          1_000_000 (List.fold_left ( + ) 0 got);
        Alcotest.(check bool) "both counted some" true (List.for_all (fun n -> n > 0) got);
        Alcotest.(check int) "and the parent sees it: over the rate" 1 (Rate_limit.admit r a ~now_ns:t0));
    Alcotest.test_case "two processes, 300 clients: each gets its burst, no more" `Quick (fun () ->
        let r = Rate_limit.create ~rate:1. ~burst:1000 ~entries:1024 in
        let clients = Array.init 300 (fun i -> v4 (i * 7919)) in
        let got =
          in_children 2 (fun _ ->
              let n = ref 0 in
              for _ = 1 to 800 do
                Array.iter (fun a -> if Rate_limit.admit r a ~now_ns:t0 = 0 then incr n) clients
              done;
              !n)
        in
        Alcotest.(check int) "300 x 1000" (300 * 1000) (List.fold_left ( + ) 0 got);
        Alcotest.(check int) "tracked" 300 (Rate_limit.tracked r ~now_ns:t0));
    Alcotest.test_case "two limits on one zone count one client once" `Quick (fun () ->
        let z = Limit_zone.create ~entries:64 () in
        let a = Rate_limit.of_zone z ~rate:1. ~burst:3 and b = Rate_limit.of_zone z ~rate:1. ~burst:3 in
        let c = ip "192.0.2.9" in
        Alcotest.(check (list int)) "a, b, a, then over" [ 0; 0; 0; 1 ]
          (List.map (fun l -> Rate_limit.admit l c ~now_ns:t0) [ a; b; a; b ]));
    Alcotest.test_case "string keys: each value its own client" `Quick (fun () ->
        let r = Rate_limit.create ~rate:1. ~burst:2 ~entries:64 in
        let buf = Bigstring.of_string "key-one key-two key-one" in
        let admit off = Rate_limit.admit_span r buf ~off ~len:7 ~now_ns:t0 in
        Alcotest.(check (list int)) "one, one, two, one (over)" [ 0; 0; 0; 1 ] (List.map admit [ 0; 16; 8; 0 ]);
        Alcotest.(check int) "an address is another client" 0 (Rate_limit.admit r (ip "192.0.2.1") ~now_ns:t0));
    Alcotest.test_case "a reload keeps a zone of the same id and size" `Quick (fun () ->
        let first = Limit_zone.registry () in
        let z = Limit_zone.reuse ~previous:(Limit_zone.registry ()) ~next:first ~id:"one $x" ~entries:64 in
        Alcotest.(check bool) "one reading: the same table" true
          (z == Limit_zone.reuse ~previous:(Limit_zone.registry ()) ~next:first ~id:"one $x" ~entries:64);
        let second = Limit_zone.registry () in
        Alcotest.(check bool) "kept" true (z == Limit_zone.reuse ~previous:first ~next:second ~id:"one $x" ~entries:64);
        Alcotest.(check bool) "another size: new" true
          (z != Limit_zone.reuse ~previous:first ~next:(Limit_zone.registry ()) ~id:"one $x" ~entries:128);
        Alcotest.(check bool) "another key: new" true
          (z != Limit_zone.reuse ~previous:first ~next:(Limit_zone.registry ()) ~id:"one $y" ~entries:64));
    Alcotest.test_case "a lock held by a dead process is taken over" `Quick (fun () ->
        let z = Limit_zone.create ~entries:16 () in
        let _ = in_children 1 (fun _ -> ignore (Limit_zone.lock z ~now_ns:t0); 0) in
        let stamp = Limit_zone.lock z ~now_ns:(t0 + 2_000_000_000) in
        Limit_zone.unlock z stamp;
        Alcotest.(check bool) "free again" true (Limit_zone.lock z ~now_ns:t0 <> 0));
    Alcotest.test_case "a lock left by a dead process, real clock: taken over within 1.5 s" `Quick (fun () ->
        (* The waiter comes at once after the holder's stamp, its [now_ns]
           read then: it must read the clock again while it waits (before,
           it spun for ever). It runs in a child the parent bounds. *)
        let z = Limit_zone.create ~entries:16 () in
        let _ = in_children 1 (fun _ -> ignore (Limit_zone.lock z ~now_ns:(Syscall.clock_monotonic_ns ())); 0) in
        let start = Unix.gettimeofday () in
        match Unix.fork () with
        | 0 ->
            let stamp = Limit_zone.lock z ~now_ns:(Syscall.clock_monotonic_ns ()) in
            Limit_zone.unlock z stamp;
            Unix._exit 0
        | pid ->
            let rec wait () =
              match Unix.waitpid [ Unix.WNOHANG ] pid with
              | 0, _ ->
                  if Unix.gettimeofday () -. start > 3. then begin
                    Unix.kill pid Sys.sigkill;
                    ignore (Unix.waitpid [] pid);
                    Alcotest.fail "the waiter still spins after 3 s"
                  end
                  else (Unix.sleepf 0.01; wait ())
              | _, Unix.WEXITED 0 -> ()
              | _ -> Alcotest.fail "the waiter failed"
            in
            wait ();
            let took = Unix.gettimeofday () -. start in
            Alcotest.(check bool) (Printf.sprintf "taken over in %.2f s (1 to 1.5)" took) true (took >= 0.9 && took < 1.5);
            let stamp = Limit_zone.lock z ~now_ns:(Syscall.clock_monotonic_ns ()) in
            Limit_zone.unlock z stamp);
    Alcotest.test_case "a zone keyed by a client's value, filled with invented keys, admits a new key; by address it refuses"
      `Quick (fun () ->
        let r = Rate_limit.of_zone ~evict:true (Limit_zone.create ~entries:1024 ()) ~rate:(1. /. 60.) ~burst:2 in
        let key i = Bigstring.of_string (Printf.sprintf "invented-%08x" i) in
        let admit r k now_ns = Rate_limit.admit_span r k ~off:0 ~len:(Bigstring.length k) ~now_ns in
        for i = 0 to 2999 do ignore (admit r (key i) t0) done;
        Alcotest.(check int) "one client filled the table" 1024 (Rate_limit.tracked r ~now_ns:t0);
        let refused = ref 0 in
        for i = 0 to 99 do if admit r (key (1_000_000 + i)) (t0 + 1000) <> 0 then incr refused done;
        Alcotest.(check int) "new keys refused of 100" 0 !refused;
        let k = Bigstring.of_string "a-legitimate-key" in
        Alcotest.(check (list int)) "a legitimate key: its burst (2), then over for a minute" [ 0; 0; 60 ]
          (List.map (fun dt -> admit r k (t0 + 2000 + dt)) [ 0; 1; 2 ]);
        let by_address = Rate_limit.of_zone (Limit_zone.create ~entries:16 ()) ~rate:(1. /. 60.) ~burst:2 in
        for x = 0 to 15 do Alcotest.(check int) (show (v4 x)) 0 (Rate_limit.admit by_address (v4 x) ~now_ns:t0) done;
        Alcotest.(check bool) "by address, full: the 17th refused (no room)" true
          (Rate_limit.admit by_address (v4 100) ~now_ns:(t0 + 1000) < 0);
        Alcotest.(check (list int)) "... and the 16 keep their counts: the burst's second, then over" [ 0; 60 ]
          (List.map (fun _ -> Rate_limit.admit by_address (v4 3) ~now_ns:(t0 + 1000)) [ 1; 2 ]));
    T.zero_alloc "admit_span of a full client-keyed zone (evicting): 0 words"
      (let r = Rate_limit.of_zone ~evict:true (Limit_zone.create ~entries:16 ()) ~rate:0.001 ~burst:1 in
       let buf = Bigstring.of_string "key-00 key-01 key-02 key-03 key-04 key-05 key-06 key-07 key-08 key-09 key-10 key-11 key-12 key-13 key-14 key-15 key-16 key-17" in
       let i = ref 0 and now = ref t0 in
       fun () ->
         now := !now + 10;
         i := (!i + 1) mod 18;
         ignore (Sys.opaque_identity (Rate_limit.admit_span r buf ~off:(7 * !i) ~len:6 ~now_ns:!now)));
    Alcotest.test_case "tracked reads the table under its lock" `Quick (fun () ->
        let r = Rate_limit.create ~rate:1. ~burst:2 ~entries:64 in
        ignore (Rate_limit.admit r (ip "192.0.2.1") ~now_ns:t0);
        let z = Rate_limit.zone r in
        let stamp = Limit_zone.lock z ~now_ns:(Syscall.clock_monotonic_ns ()) in
        let start = Unix.gettimeofday () in
        (* The child reads while the parent holds the lock for 300 ms: it
           must wait for it. *)
        let waited = Mapped.map_shared 8 in
        (match Unix.fork () with
         | 0 ->
             let n = Rate_limit.tracked r ~now_ns:t0 in
             Bigstring.unsafe_set64 waited 0 (Int64.of_float ((Unix.gettimeofday () -. start) *. 1000.));
             Unix._exit (if n = 1 then 0 else 3)
         | pid ->
             Unix.sleepf 0.3;
             Limit_zone.unlock z stamp;
             (match Unix.waitpid [] pid with _, Unix.WEXITED 0 -> () | _ -> Alcotest.fail "tracked: not 1"));
        let ms = Int64.to_int (Bigstring.unsafe_get64 waited 0) in
        Alcotest.(check bool) (Printf.sprintf "tracked returned after %d ms (>= 250: once the lock was free)" ms) true
          (ms >= 250));
    Alcotest.test_case "limit_conn: after a reload, a crashed worker's counts are cleared, whichever row is taken" `Quick
      (fun () ->
        let tb = Conn_limit.table ~entries:1024 () in
        let a = ip "192.0.2.11" in
        (* Row 0: a worker of the previous generation, retired (it ends
           cleanly) once the next one started. *)
        let ready_r, ready_w = Unix.pipe () and go_r, go_w = Unix.pipe () in
        let retired =
          match Unix.fork () with
          | 0 ->
              Unix.close ready_r;
              Unix.close go_w;
              ignore (Conn_limit.create_in tb ~per_client:1 ~slots:4);
              ignore (Unix.write_substring ready_w "r" 0 1);
              ignore (Unix.read go_r (Bytes.create 1) 0 1);
              Unix._exit 0
          | pid -> pid
        in
        Unix.close ready_w;
        Unix.close go_r;
        ignore (Unix.read ready_r (Bytes.create 1) 0 1);
        Unix.close ready_r;
        (* Row 1: a worker of the new generation, the client's one
           connection open, killed. *)
        let crashed =
          in_children 1 (fun _ ->
              let t = Conn_limit.create_in tb ~per_client:1 ~slots:4 in
              if Conn_limit.acquire t ~slot:0 a then 1 else 0)
        in
        Alcotest.(check (list int)) "the crashed worker held the connection" [ 1 ] crashed;
        Unix.close go_w;
        ignore (Unix.waitpid [] retired);
        (* Its replacement takes the first row whose process is gone: row 0. *)
        let t = Conn_limit.create_in tb ~per_client:1 ~slots:4 in
        Alcotest.(check int) "the crashed worker's count cleared" 0 (Conn_limit.count t a);
        Alcotest.(check bool) "the client is served" true (Conn_limit.acquire t ~slot:1 a));
    Alcotest.test_case "a failed reading gives back the tables it made, keeps those carried over" `Quick (fun () ->
        let zero_bytes () =
          (* Shared anonymous mappings: "/dev/zero (deleted)" in maps. *)
          let ic = open_in "/proc/self/maps" and n = ref 0 in
          (try
             while true do
               let l = input_line ic in
               if T.find_sub l "/dev/zero (deleted)" >= 0 then
                 Scanf.sscanf l "%x-%x" (fun lo hi -> n := !n + (hi - lo))
             done
           with End_of_file -> ());
          close_in ic;
          !n
        in
        let previous = Limit_zone.registry () in
        let kept = Limit_zone.reuse ~previous:(Limit_zone.registry ()) ~next:previous ~id:"kept $x" ~entries:64 in
        let r = Rate_limit.of_zone kept ~rate:1. ~burst:2 in
        ignore (Rate_limit.admit r (ip "192.0.2.5") ~now_ns:t0);
        let before = zero_bytes () in
        let next = Limit_zone.registry () in
        Alcotest.(check bool) "carried over" true (kept == Limit_zone.reuse ~previous ~next ~id:"kept $x" ~entries:64);
        ignore (Limit_zone.reuse ~previous ~next ~id:"big $y" ~entries:(1 lsl 20));
        let made = zero_bytes () - before in
        Alcotest.(check bool) (Printf.sprintf "a new 32 MiB table mapped (%d bytes)" made) true (made >= 32 lsl 20);
        Limit_zone.discard ~previous ~next;
        Alcotest.(check int) "given back" before (zero_bytes ());
        Alcotest.(check (list int)) "the carried-over table still counts: the burst's second, then over" [ 0; 1 ]
          (List.map (fun _ -> Rate_limit.admit r (ip "192.0.2.5") ~now_ns:t0) [ 1; 2 ]));
    Alcotest.test_case "limit_conn: two processes, one table: the limit for both" `Quick (fun () ->
        let tb = Conn_limit.table ~entries:1024 () in
        let a = ip "192.0.2.7" in
        let done_ = Mapped.map_shared 8 in
        let got =
          in_children 2 (fun _ ->
              let t = Conn_limit.create_in tb ~per_client:5 ~slots:64 in
              let n = ref 0 in
              for slot = 0 to 9 do if Conn_limit.acquire t ~slot a then incr n done;
              (* Held until both are done: a child that ended first would be
                 a process gone, its row (and counts) cleared by the other's
                 claim. *)
              let rec arrive () =
                let d = Int64.to_int (Bigstring.unsafe_get64 done_ 0) in
                if Mapped.cas64 done_ 0 d (d + 1) = 0 then arrive ()
              in
              arrive ();
              while Int64.to_int (Bigstring.unsafe_get64 done_ 0) < 2 do Unix.sleepf 0.001 done;
              !n)
        in
        Alcotest.(check int) (Printf.sprintf "accepted in all (%s)" (String.concat " + " (List.map string_of_int got)))
          5 (List.fold_left ( + ) 0 got);
        (* Both children exited holding their connections: the parent takes
           a row of theirs, and clears every dead row's entries. *)
        let t = Conn_limit.create_in tb ~per_client:5 ~slots:4 in
        Alcotest.(check int) "the dead processes' rows cleared" 0 (Conn_limit.count t a);
        Alcotest.(check bool) "held by this process" true (Conn_limit.acquire t ~slot:1 a);
        let t2 = Conn_limit.create_in tb ~per_client:5 ~slots:4 in
        Alcotest.(check int) "the same process keeps its row" 1 (Conn_limit.count t2 a);
        ignore (in_children 1 (fun _ -> ignore (Conn_limit.create_in tb ~per_client:5 ~slots:4); 0));
        Alcotest.(check int) "a new process does not clear a live row" 1 (Conn_limit.count t a);
        Conn_limit.release t ~slot:1;
        Alcotest.(check bool) "served again" true (Conn_limit.acquire t ~slot:0 a));
    Alcotest.test_case "limit_conn: no lost update between two processes" `Quick (fun () ->
        let tb = Conn_limit.table ~entries:1024 () in
        let a = ip "192.0.2.8" in
        let got =
          in_children 2 (fun _ ->
              let t = Conn_limit.create_in tb ~per_client:1_000_000 ~slots:4 in
              for _ = 1 to 200_000 do
                if Conn_limit.acquire t ~slot:0 a then Conn_limit.release t ~slot:0
              done;
              ignore (Conn_limit.acquire t ~slot:1 a);
              Conn_limit.count t a)
        in
        (* Each ends holding one: the count seen last is 2, or 1 when the
           other had not taken its own yet; never more, never lost. *)
        Alcotest.(check bool) (Printf.sprintf "counts seen %s" (String.concat ", " (List.map string_of_int got))) true
          (List.for_all (fun n -> n = 1 || n = 2) got && List.mem 2 got));
    T.zero_alloc "admit_span: 0 words"
      (let r = Rate_limit.create ~rate:1e9 ~burst:1000 ~entries:64 and buf = Bigstring.of_string "an-api-key-of-some-length" and now = ref t0 in
       fun () ->
         now := !now + 10;
         ignore (Sys.opaque_identity (Rate_limit.admit_span r buf ~off:0 ~len:25 ~now_ns:!now))) ]

let () =
  Alcotest.run "guard"
    [ ("crypt", crypt_tests); ("address rules", rules_tests); ("rate", rate_tests);
      ("connections", conn_tests); ("basic auth", auth_tests); ("guard", guard_tests); ("refusals", refusal_tests); ("stats token", stats_tests);
      ("totals", totals_tests); ("through H1",
        [ guarded_cycle "a guarded request that passes, through H1" ();
          guarded_cycle "keyed by a header, through H1"
            ~zone:{ Guard.default_zone with name = "keys"; key = Guard.Header "x-api-key" }
            ~fields:"X-Api-Key: k-123\r\n" ();
          guarded_cycle "keyed by a cookie, through H1"
            ~zone:{ Guard.default_zone with name = "s"; key = Guard.Cookie "session"; status = 503 }
            ~fields:"Cookie: a=1; session=abc\r\n" ();
          guarded_cycle "keyed by the site, through H1"
            ~zone:{ Guard.default_zone with name = "site"; key = Guard.Site "a.test" } () ]);
      ("zones", zone_tests) ]
