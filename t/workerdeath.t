#!/usr/bin/perl

# A worker that dies without cleaning up (SIGKILL) leaves no backend
# connection counted in the shared stats: the master takes back what the
# dead process held when it reaps it, so max_connections does not stay
# full.  Covered: a worker of the running generation, the same after a
# reload (the zones are carried over), and an old-generation worker
# killed while it drains its sessions after a reload.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Wire qw(raw_connect read_packet read_err);

my $t = Sluice::Test->new;
$t->has('readconn');

# a long shutdown timeout: an old worker keeps its sessions after a reload
$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
worker_shutdown_timeout 1m;
mysql {
    user app { password "secret"; }
    upstream capped { server %%PRIMARY%% role=primary max_connections=2; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream capped;
    }
    upstream open { server %%PRIMARY%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        upstream open;
        auth passthrough;
        max_handshakes 2;
        auth_timeout 1m;
    }
}
EOF
$t->run;
$t->plan(20);

# two sessions that hold the two slots of max_connections=2
sub fill {
    my ($what) = @_;
    my @s = map { $t->dbh } 1 .. 2;
    ok((grep { $_ && $_->do('SELECT 1') } @s) == 2,
       "$what: two sessions are open");
    ok(!$t->dbh, "$what: a third is refused");
    is($DBI::err, 1040, "$what: with ERR 1040");
    return @s;
}

# a new client gets in within a deadline
sub gets_in {
    my ($what) = @_;
    ok(wait_for(sub { my $d = $t->dbh; $d && $d->selectrow_array('SELECT 1') },
                what => "a session after $what"),
       "$what: a new client gets in, the dead worker's slots were "
       . 'given back');
}

my $off = length $t->error_log;

# --- a worker of the running generation ------------------------------------

my @held = fill('running worker');
$t->kill_worker;
gets_in('running worker killed');
my $taken = qr/\[notice\] \d+: worker process index \d+ held 2 backend /
            . qr/connection\(s\) and 0 handshake\(s\) of /
            . qr/"capped\/127\.0\.0\.1:\d+", released/;
like(substr($t->error_log, $off), qr/$taken/,
     'running worker killed: the master logs what it took back');
@held = ();

# --- the same after a reload ------------------------------------------------

ok($t->reload, 'a reload with the same config');
@held = fill('after reload');
$t->kill_worker;
gets_in('after reload, worker killed');
@held = ();

# --- an old-generation worker, killed while it drains -----------------------

@held = fill('draining');
# inside a transaction: not at rest, so not handed over to the new worker
ok((grep { $_->do('BEGIN') } @held) == 2, 'draining: two transactions open');
my ($old) = $t->worker_pids;
ok($t->reload, 'draining: a reload, the old worker keeps its sessions');
$t->kill_worker(pid => $old, wait => 0);
gets_in('draining: the old worker killed');
@held = ();

# --- handshakes in flight (max_handshakes) ------------------------------------

# Two passthrough clients that say nothing after the relayed greeting hold
# both handshake slots; their worker killed, the slots come back.
my @mute = map { raw_connect($t->port(1)) } 1 .. 2;
ok((grep { my (undef, $g) = read_packet($_); $g && ord $g == 10 } @mute)
   == 2, 'handshakes: two silent passthrough clients are greeted');
my $third = raw_connect($t->port(1));
my $e = read_err($third);
is($e && $e->{code}, 1040, 'handshakes: a third is refused with ERR 1040');
$t->kill_worker;
my $greeted = wait_for(sub {
    my $c = raw_connect($t->port(1));
    my (undef, $g) = read_packet($c);
    $g && ord $g == 10 }, what => 'a greeting after the worker died');
ok($greeted, 'handshakes: after the worker is killed a new client is '
   . 'greeted: its handshake slots were given back');
like(substr($t->error_log, $off),
     qr/held 2 backend connection\(s\) and 2 handshake\(s\) of "open\//,
     'handshakes: the master logs them');
@mute = ();
