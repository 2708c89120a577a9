type t = Get | Head | Post | Put | Delete | Connect | Options | Trace | Patch | Other

let to_string = function
  | Get -> "GET" | Head -> "HEAD" | Post -> "POST" | Put -> "PUT"
  | Delete -> "DELETE" | Connect -> "CONNECT" | Options -> "OPTIONS"
  | Trace -> "TRACE" | Patch -> "PATCH" | Other -> "OTHER"

let[@inline] byte b i = Bigstring.unsafe_get b i

(* Dispatch on length and first byte, then confirm the rest: at most one
   full comparison per call. Each comparison names [b], [off] and [len]
   itself: a local helper closing over them would be allocated per call. *)
let of_buffer b ~off ~len =
  match len with
  | 3 -> (match byte b off with
      | 'G' -> if Bigstring.equal_string b ~off ~len "GET" then Get else Other
      | 'P' -> if Bigstring.equal_string b ~off ~len "PUT" then Put else Other
      | _ -> Other)
  | 4 -> (match byte b off with
      | 'H' -> if Bigstring.equal_string b ~off ~len "HEAD" then Head else Other
      | 'P' -> if Bigstring.equal_string b ~off ~len "POST" then Post else Other
      | _ -> Other)
  | 5 -> (match byte b off with
      | 'T' -> if Bigstring.equal_string b ~off ~len "TRACE" then Trace else Other
      | 'P' -> if Bigstring.equal_string b ~off ~len "PATCH" then Patch else Other
      | _ -> Other)
  | 6 -> if Bigstring.equal_string b ~off ~len "DELETE" then Delete else Other
  | 7 -> (match byte b off with
      | 'C' -> if Bigstring.equal_string b ~off ~len "CONNECT" then Connect else Other
      | 'O' -> if Bigstring.equal_string b ~off ~len "OPTIONS" then Options else Other
      | _ -> Other)
  | _ -> Other

let of_string = function
  | "GET" -> Get | "HEAD" -> Head | "POST" -> Post | "PUT" -> Put | "DELETE" -> Delete
  | "CONNECT" -> Connect | "OPTIONS" -> Options | "TRACE" -> Trace | "PATCH" -> Patch
  | _ -> Other
let is_safe = function Get | Head | Options | Trace -> true | _ -> false
