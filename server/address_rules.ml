type action = Allow | Deny
type rule = action * string

(* Rule [i]'s network and mask, each as four 32-bit words loaded from the
   16 address bytes in machine order, so that an address loads the same
   way and compares word by word. *)
type t = { allow : bool array; net : int array; mask : int array }

let empty = { allow = [||]; net = [||]; mask = [||] }
let is_empty t = Array.length t.allow = 0

let word = Client_key.word

(* The 16 bytes of an address, an IPv4 one mapped, and the prefix length
   over those 128 bits. *)
let prefix_bytes s =
  let v6 = Ipaddr.V6.Prefix.of_string and v4 = Ipaddr.V4.Prefix.of_string in
  let of_v4 p =
    let b = Bytes.make 16 '\000' in
    Bytes.set b 10 '\255';
    Bytes.set b 11 '\255';
    Bytes.blit_string (Ipaddr.V4.to_octets (Ipaddr.V4.Prefix.network p)) 0 b 12 4;
    (b, 96 + Ipaddr.V4.Prefix.bits p)
  in
  let of_v6 p = (Bytes.of_string (Ipaddr.V6.to_octets (Ipaddr.V6.Prefix.network p)), Ipaddr.V6.Prefix.bits p) in
  if s = "all" then Ok (Bytes.make 16 '\000', 0)
  else
    let has_slash = String.contains s '/' in
    match v4 (if has_slash then s else s ^ "/32") with
    | Ok p -> Ok (of_v4 p)
    | Error _ -> (
        match v6 (if has_slash then s else s ^ "/128") with
        | Ok p -> Ok (of_v6 p)
        | Error (`Msg m) -> Error m)

let mask_bytes bits =
  let b = Bytes.make 16 '\000' in
  for i = 0 to 15 do
    let left = bits - (8 * i) in
    let v = if left >= 8 then 0xff else if left <= 0 then 0 else 0xff lxor (0xff lsr left) in
    Bytes.set b i (Char.chr v)
  done;
  b

let action_name = function Allow -> "allow" | Deny -> "deny"

let compile rules =
  let n = List.length rules in
  let t = { allow = Array.make n false; net = Array.make (4 * n) 0; mask = Array.make (4 * n) 0 } in
  let rec go i = function
    | [] -> Ok t
    | (action, addr) :: rest -> (
        match prefix_bytes addr with
        | Error m -> Error (Printf.sprintf "%s %s: %s" (action_name action) addr m)
        | Ok (net, bits) ->
            let mask = mask_bytes bits in
            t.allow.(i) <- action = Allow;
            for k = 0 to 3 do
              t.mask.((4 * i) + k) <- word mask k;
              t.net.((4 * i) + k) <- word net k land word mask k
            done;
            go (i + 1) rest)
  in
  go 0 rules

let parse_rule s =
  match String.index_opt s ':' with
  | None -> Error (Printf.sprintf "%S: give allow:ADDRESS or deny:ADDRESS" s)
  | Some i -> (
      let addr = String.sub s (i + 1) (String.length s - i - 1) in
      match String.sub s 0 i with
      | "allow" -> Ok (Allow, addr)
      | "deny" -> Ok (Deny, addr)
      | a -> Error (Printf.sprintf "%S: %S is neither allow nor deny" s a))

let allowed t addr =
  let n = Array.length t.allow in
  let w0 = word addr 0 and w1 = word addr 1 and w2 = word addr 2 and w3 = word addr 3 in
  let i = ref 0 and decided = ref (-1) in
  while !decided < 0 && !i < n do
    let k = 4 * !i in
    if w0 land t.mask.(k) = t.net.(k)
       && w1 land t.mask.(k + 1) = t.net.(k + 1)
       && w2 land t.mask.(k + 2) = t.net.(k + 2)
       && w3 land t.mask.(k + 3) = t.net.(k + 3)
    then decided := if t.allow.(!i) then 1 else 0;
    incr i
  done;
  !decided <> 0
