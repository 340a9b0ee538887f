#!/usr/bin/perl

# readconn's choice of server: least connections weighted by `weight`
# among the servers of readconn_role, a server at its max_connections
# left for the others, readconn_role any spreading over primary and
# replica, and a server whose port is closed tried once, then avoided
# while sessions go on to the others.
#
# The sandbox has one replica, so it is declared twice, once over TCP and
# once over its unix socket: two servers to sluice, told apart by the
# `backend: NAME` of the session's "authenticated" log line.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('readconn');

# Port 9 is reserved for this test and nothing listens there.
$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    upstream weighted {
        server %%REPLICA%% role=replica weight=1;
        server unix:%%REPLICA_SOCKET%% role=replica weight=3;
        server %%PRIMARY%% role=primary weight=1000;
    }
    upstream capped {
        server %%REPLICA%% role=replica max_connections=1;
        server unix:%%REPLICA_SOCKET%% role=replica;
    }
    upstream both {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
    }
    upstream flaky {
        server 127.0.0.1:%%PORT_9%% role=replica;
        server %%REPLICA%% role=replica;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        readconn_role replica;
        upstream weighted;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        readconn_role replica;
        upstream capped;
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        router readconn;
        readconn_role any;
        upstream both;
    }
    server {
        listen 127.0.0.1:%%PORT_3%%;
        router readconn;
        readconn_role replica;
        upstream flaky;
        connect_timeout 2s;
    }
}
EOF
$t->run;
$t->plan(14);

my $tcp  = $t->replica;
my $unix = 'unix:' . $t->replica_socket;
my $dead = '127.0.0.1:' . $t->port(9);

# Open $n sessions to listener $port one after the other, and keep them
# open.  Returns (the handles that work, { backend name => sessions }
# from the "authenticated" lines those sessions logged).
sub open_sessions {
    my ($port, $n) = @_;
    my $off = length $t->error_log;
    my @dbh = grep { $_ && $_->do('SELECT 1') }
        map { $t->dbh(port => $t->port($port)) } 1 .. $n;
    my @lines;
    # the line is written just after the client's OK went out
    wait_for(sub {
        @lines = grep { /\*\d+ authenticated, .*, backend: / }
            split /\n/, substr($t->error_log, $off);
        @lines >= @dbh;
    }, what => "$n authenticated sessions in the log");
    my %by;
    $by{$_}++ for map { /, backend: (\S+)$/ } @lines;
    return (\@dbh, \%by);
}

# --- least connections, weighted -----------------------------------------

# Each pick takes the server with the lowest (open + 1) / weight, the
# first one on a tie: 8 sessions go 2 to weight 1 and 6 to weight 3.
my ($held, $by) = open_sessions(0, 8);
is(scalar @$held, 8, 'weighted: 8 sessions are open');
is($by->{$tcp}, 2, "weighted: 2 on the weight=1 server ($tcp)");
is($by->{$unix}, 6, 'weighted: 6 on the weight=3 server (unix socket)');
ok(!$by->{ $t->primary }, 'weighted: none on the primary, whatever its '
   . 'weight (readconn_role replica)');
is_deeply([ sort map { $_->selectrow_array('SELECT @@server_id') } @$held ],
          [ (2) x 8 ], 'weighted: every session runs on the replica');
undef $held;

# --- max_connections -----------------------------------------------------

# Without the cap the first server would get 3 of 5 (1, 3, 5: ties go to
# the first); at max_connections=1 it is passed over for the other.
($held, $by) = open_sessions(1, 5);
is(scalar @$held, 5, 'capped: 5 sessions are open');
is($by->{$tcp}, 1, 'capped: 1 on the server with max_connections=1');
is($by->{$unix}, 4, 'capped: the other 4 on the uncapped server');
undef $held;

# --- readconn_role any ---------------------------------------------------

($held, $by) = open_sessions(2, 4);
my %ids;
$ids{ $_->selectrow_array('SELECT @@server_id') // 0 }++ for @$held;
is_deeply(\%ids, { 1 => 2, 2 => 2 },
          'readconn_role any: 4 sessions, 2 on the primary, 2 on the replica');
is_deeply($by, { $t->primary => 2, $tcp => 2 },
          'readconn_role any: and the log says the same');
undef $held;

# --- a closed port -------------------------------------------------------

# The dead server is first and has no connections, so the first session
# picks it, fails to connect, and goes on to the replica; after that the
# dead server is avoided (for 10 s), not tried by every session.
my $off = length $t->error_log;
($held, $by) = open_sessions(3, 6);
is(scalar @$held, 6, 'closed port: 6 sessions are open all the same');
is_deeply($by, { $tcp => 6 }, 'closed port: all of them on the replica');
my @fail = grep { /backend failed: .*, backend: \Q$dead\E$/ }
    split /\n/, substr($t->error_log, $off);
is(scalar @fail, 1, 'closed port: its connect failure is logged once');
like($fail[0] // '', qr/\[error\] .*backend failed: Connection refused/,
     'closed port: as a refused connection, at [error]');
undef $held;
