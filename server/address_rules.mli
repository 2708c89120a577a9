(** Allow and deny rules by client address, as nginx's [allow] and
    [deny]: an ordered list of address prefixes (IPv4 and IPv6, CIDR), the
    first that contains the client decides; when none does, the client is
    allowed (an operator who wants a whitelist ends it with [deny all]).

    Addresses are 16 bytes of IPv6 in network order, an IPv4 address as
    [::ffff:a.b.c.d] ({!Ctx.peer_ip}), so an IPv4 rule also matches an IPv4
    client reaching an IPv6 socket. Compiling parses with [ipaddr] and
    allocates; {!allowed} does not allocate and costs a few word compares
    per rule. *)

type action = Allow | Deny

type rule = action * string
(** An action and an address: ["10.0.0.0/8"], ["192.168.1.7"] (a /32),
    ["2001:db8::/32"], ["::1"] (a /128), or ["all"]. *)

type t
(** Compiled rules: immutable, may be shared by workers and sites. *)

val compile : rule list -> (t, string) result
(** [compile rules] checks every address; [Error] names the first one
    that is not an address or prefix (["deny 10.0.0.0/33: ..."]). A prefix
    with host bits set ([10.1.2.3/8]) is taken as its network, as nginx
    does. Allocates. *)

val parse_rule : string -> (rule, string) result
(** [parse_rule "allow:10.0.0.0/8"] reads a rule as [--access] writes it:
    [allow] or [deny], a colon, an address (or [all]). Allocates. *)

val empty : t
(** No rule: everyone is allowed. *)

val is_empty : t -> bool

val allowed : t -> Bytes.t -> bool
(** [allowed t addr]: the action of the first rule whose prefix contains
    [addr] (16 bytes, see above) is [Allow], or no rule contains it.
    Does not allocate. *)
