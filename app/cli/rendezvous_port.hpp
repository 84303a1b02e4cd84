// The TCP port a launcher gives the ranks it starts on this machine for their rendezvous.
//
// Why not a port the kernel picks (bind to port 0, close, hand it on): the kernel hands out the
// same ephemeral range (net.ipv4.ip_local_port_range) to every outgoing connection and to every
// listener that binds port 0, Gloo's pair listeners included. A port found free that way can be
// taken by another run's socket before rank 0 binds it; and a rank that connects to it before
// rank 0 listens can be given that very port as its own source port on loopback and connect to
// itself. Either reads as a rendezvous failure ("connection closed by peer") that has nothing to
// do with the run.
//
// Invariant: the port returned is below the ephemeral range whenever that leaves room, so the
// kernel never hands it to anyone else; only another launcher picking the same port at the same
// moment can collide, and the pick is random over thousands of ports and found unbound first.
#pragma once

namespace pipelens::cli {

// A port nobody has bound right now, outside the kernel's ephemeral range where it can be.
// Throws std::runtime_error when no socket can be opened at all.
int rendezvous_port();

}  // namespace pipelens::cli
