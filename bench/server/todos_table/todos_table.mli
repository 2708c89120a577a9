(** The todos of the routed-JSON benchmark case (todos_c64): ids ["1"] to
    ["1000"], each with its JSON body made once at start-up, so a request
    costs the routing, the lookup and the response, not JSON printing. *)

val find : string -> string option
(** [find id] is the JSON body of todo [id]
    ([{"id":42,"title":"todo number 42","done":false}] for ["42"]). Does
    not allocate beyond the option. *)

val not_found : string
(** The JSON body of the 404 answer. *)
