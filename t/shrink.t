#!/usr/bin/perl

# A reload that lowers worker_processes drops a worker slot and its
# SO_REUSEPORT socket.  Connections already waiting in that socket's
# accept queue are served by the old worker before it closes the socket,
# not reset.  The workers are stopped (SIGSTOP) while the clients connect,
# so the kernel queues the connections in both slots' sockets whatever the
# timing.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Wire qw(raw_connect read_packet parse_greeting);

my $t = Sluice::Test->new;
$t->has('readconn');

my $conf = <<'EOF2';
worker_processes %%N%%;
worker_shutdown_timeout 5s;
mysql {
    user app { password "secret"; }
    upstream cluster { server %%PRIMARY%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
        max_handshakes_per_host 0;   # all the clients are 127.0.0.1
    }
}
EOF2
(my $two = $conf) =~ s/%%N%%/2/;
(my $one = $conf) =~ s/%%N%%/1/;
$t->write_file_expand('sluice.conf', $two);
$t->run;
$t->plan(4);

my @old = $t->worker_pids;
is(scalar @old, 2, 'two workers');
kill 'STOP', @old;
my $n = 300;        # more than one accept round (64) per worker
my @clients = map { raw_connect($t->port(0)) } 1 .. $n;
$t->write_file_expand('sluice.conf', $one);
ok($t->reload, 'a reload to worker_processes 1 while the connections wait');
kill 'CONT', @old;

my $greeted = grep {
    my (undef, $g) = read_packet($_);
    defined $g && parse_greeting($g);
} @clients;
is($greeted, $n, 'every waiting connection is greeted, none is reset');
ok(wait_for(sub { !grep { my $o = $_; grep { $_ == $o } $t->worker_pids }
                  @old }, timeout => 15, what => 'the old workers to exit'),
   'and the old workers exit');
@clients = ();
