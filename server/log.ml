let msg fmt = Printf.eprintf ("httpz: " ^^ fmt ^^ "\n%!")
