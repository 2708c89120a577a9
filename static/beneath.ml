module B = Httpz.Bigstring

type t = {
  root_fd : int;
  root_real : string;
      (** the root's path as the kernel resolves it; [""] when it cannot
          be read (no /proc), which turns the opened-path check off *)
  resolved : B.t;  (** where an opened fd leads ({!leads_to_hidden}) *)
  dotfiles : bool;
  follow_symlinks : bool;
}

let root_real fd =
  let b = B.create 4096 in
  let n = Extra.fd_path fd b 0 4096 in
  if n <= 0 then "" else B.sub_string b ~off:0 ~len:n

let create ~root_fd ~dotfiles ~follow_symlinks ~room =
  { root_fd; root_real = root_real root_fd; resolved = B.create (room + 4096); dotfiles;
    follow_symlinks }

let root_fd t = t.root_fd

(* A segment starting with '.' ([/.git], [/a/.env]); normalisation has
   already removed "." and ".." segments, so this is exactly the dotfiles.
   [.well-known] (RFC 8615) is public by definition. *)
let exact_hidden_between (p : B.t) ~off n =
  let hidden = ref false and i = ref off in
  while not !hidden && !i < n - 1 do
    if B.unsafe_get p !i = '/' && B.unsafe_get p (!i + 1) = '.' then begin
      let s = !i + 1 in
      let e = ref s in
      while !e < n && B.unsafe_get p !e <> '/' do incr e done;
      if not (!e - s = 11 && B.equal_string p ~off:s ~len:11 ".well-known") then hidden := true;
      i := !e
    end
    else incr i
  done;
  !hidden

(* Whether [p.{off .. n-1}] may hold a '/' followed by a '.', eight bytes
   read at a time: the word at [i] holds the pairs that start at
   [i .. i+6] (lane [j] is byte [i+j] on a little-endian machine, the only
   order this reads words in). [false] is sure; [true] is settled by the
   exact loop. *)
let may_have_slash_dot (p : B.t) ~off n =
  let i = ref off and maybe = ref false in
  while (not !maybe) && !i + 1 < n do
    let k = n - !i in
    if (not Sys.big_endian) && (k >= 8 || !i + 8 <= B.length p) then begin
      let x = B.unsafe_get64 p !i in
      (* Lanes past [n] become 0x00, which is neither byte. *)
      let x = if k >= 8 then x else Int64.logand x (Int64.pred (Int64.shift_left 1L (8 * k))) in
      (* Lanes equal to 0x00 after the xor are marked in their high bit;
         a borrow may mark the lane above one too, which only says "maybe". *)
      let slash = Int64.logxor x 0x2f2f2f2f2f2f2f2fL and dot = Int64.logxor x 0x2e2e2e2e2e2e2e2eL in
      let slash = Int64.logand (Int64.sub slash 0x0101010101010101L) (Int64.lognot slash)
      and dot = Int64.logand (Int64.sub dot 0x0101010101010101L) (Int64.lognot dot) in
      if Int64.logand (Int64.logand (Int64.shift_left slash 8) dot) 0x8080808080808080L <> 0L then
        maybe := true;
      i := !i + 7
    end
    else maybe := true
  done;
  !maybe

let hidden_between p ~off n = may_have_slash_dot p ~off n && exact_hidden_between p ~off n

let has_hidden_segment p n = hidden_between p ~off:0 n

(* The dotfile rule holds for what was opened, not only for the path
   asked: [/gitlink/config] with [gitlink -> .git] opens [.git/config].
   The kernel tells where the descriptor leads; below the root's own real
   path, no segment may be hidden. An fd whose path cannot be read counts
   as hidden (fail closed). One readlink per open; cached answers open
   nothing. *)
let leads_to_hidden t fd =
  let n = Extra.fd_path fd t.resolved 0 (B.length t.resolved) in
  let r = String.length t.root_real in
  if n < 0 then true
  else if n < r || not (B.equal_string t.resolved ~off:0 ~len:r t.root_real) then true
  else hidden_between t.resolved ~off:(if r = 1 then 0 else r) n

(* Opens [b.{off .. off+len-1}] beneath the root: the kernel keeps the
   open inside it (openat2 RESOLVE_BENEATH), and unless dotfiles are
   served, a descriptor that leads to one is closed and reported as
   missing ([-enoent]). *)
let openat t b off len =
  let fd = Syscall.openat2_beneath t.root_fd b off len ~no_symlinks:(not t.follow_symlinks) in
  if fd >= 0 && (not t.dotfiles) && t.root_real <> "" && leads_to_hidden t fd then begin
    ignore (Syscall.close fd);
    - Syscall.enoent
  end
  else fd


let hides t p n = (not t.dotfiles) && has_hidden_segment p n
