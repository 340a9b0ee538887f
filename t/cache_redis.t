#!/usr/bin/perl

# The Redis tier's connections (issue 22, second step), against a real
# redis-server: each worker connects to each service its servers use,
# set up as configured (SELECT, a CLIENT SETNAME naming the service and
# the worker) without blocking; a wrong password and a refused connection
# are logged with Redis' or the system's reason (the password never), and
# clients are served all the same; a connection Redis drops comes back.
# (The cache sends nothing through them yet.)

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('cache', 'cache_redis', 'readconn');
$t->need((grep { -x "$_/redis-cli" } split /:/, $ENV{PATH}),
         'redis-cli is not in PATH (contrib/deps.sh installs it)');

my $rport = $t->redis_port;
my $PW = 'N0pe-Redis-Pw-4471';

$t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 2;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    cache_zone qc size=8m;
    redis shared { server 127.0.0.1:$rport; db 2; }
    redis denied { server 127.0.0.1:$rport; user nobody; password "$PW"; }
    redis refused { server 127.0.0.1:1; }
    upstream db {
        monitor_user monitor; monitor_password "monitor";
        server %%PRIMARY%% role=primary;
    }
    server { listen 127.0.0.1:%%PORT_0%%; router readconn; upstream db;
             filters cache; cache qc; cache_redis shared; }
    server { listen 127.0.0.1:%%PORT_1%%; router readconn; upstream db;
             filters cache; cache qc; cache_redis denied; }
    server { listen 127.0.0.1:%%PORT_2%%; router readconn; upstream db;
             filters cache; cache qc; cache_redis refused; }
}
EOF
$t->run;
$t->plan(10);
$t->allow_log(qr/redis "(?:denied|refused|shared)": /);

# Redis' clients: { name => [ { id, db, name } ... ] }
sub clients {
    my %by;
    my $list = qx{redis-cli -h 127.0.0.1 -p $rport client list};
    for my $line (split /\n/, $list) {
        my %c = $line =~ /(\w+)=(\S*)/g;
        push @{ $by{ $c{name} // '' } }, \%c;
    }
    return \%by;
}
sub shared_clients {
    my $c = clients();
    return map { @{ $c->{$_} } } grep { /^sluice:shared:\d+\z/ } keys %$c;
}

my @w = $t->worker_pids;
ok(wait_for(sub { shared_clients() == 2 }, what => 'two connections'),
   'each of the 2 workers connects to the service its server uses');
is(join(' ', sort map { $_->{name} =~ /(\d+)\z/ } shared_clients()),
   join(' ', sort @w), 'named sluice:SERVICE:PID after its worker');
is(join(' ', map { $_->{db} } shared_clients()), '2 2', 'in the db asked');

ok(wait_for(sub { $t->grep_log(qr/redis "denied": AUTH: WRONGPASS/) },
            what => 'the AUTH error'),
   'a wrong password: logged with Redis\' reason');
ok(wait_for(sub { $t->grep_log(qr/redis "refused": connect: Connection /) },
            what => 'the connect error'),
   'a refused connection: logged with the reason');
is(scalar(() = $t->error_log =~ /\Q$PW\E/g), 0,
   'the password is never logged');

my $d = $t->dbh(port => $t->port(1));
is(($d->selectrow_array('SELECT 41 + 1'))[0], 42,
   'the server whose Redis refuses it serves all the same');

my %old = map { $_->{id} => 1 } shared_clients();
system("redis-cli -h 127.0.0.1 -p $rport client kill id $_ >/dev/null")
    for keys %old;
ok(wait_for(sub { my @c = shared_clients();
                  @c == 2 && !grep { $old{ $_->{id} } } @c },
            what => 'new connections'),
   'connections Redis dropped come back');
like($t->error_log, qr/redis "shared": connection lost/,
     'the loss is logged');
ok(wait_for(sub { $t->grep_log(qr/\[notice\] \d+: redis "shared": connected/) },
            what => 'the notice'), 'and the return, at notice');
