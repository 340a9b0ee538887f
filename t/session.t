#!/usr/bin/perl

# What a client asked for at login reaches the backend (database,
# character set, connect attributes), readconn_role picks the server, and
# the limits and failures a session meets (unknown database, a killed
# backend, no server reachable, max_connections, worker_connections) reach
# the client as the right ERR while sluice and the other sessions go on.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::FakeBackend;
use Sluice::Wire qw(greeting_of raw_login read_err);

my $t = Sluice::Test->new;
$t->has('readconn');

# Port 9 is reserved for this test and nothing listens there: a dead
# server.  Port 8 is a fake backend: the primary's real greeting, then OK
# to whatever sluice sends, until COM_QUIT.
my $fake = Sluice::FakeBackend->new(port => $t->port(8),
    greeting => greeting_of($t->primary_port)
                // die("no greeting from the primary\n"),
    script => [ 'login', 'answer_ok' ]);

my $conf = <<'EOF';
worker_processes 1;
events { worker_connections %%CONNS%%; }
mysql {
    user app { password "secret"; }
    upstream cluster {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
    }
    upstream dead { server 127.0.0.1:%%PORT_9%% role=primary; }
    upstream capped { server %%PRIMARY%% role=primary max_connections=2; }
    upstream fake { server 127.0.0.1:%%PORT_8%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        readconn_role primary;
        upstream cluster;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        readconn_role replica;
        upstream cluster;
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        router readconn;
        upstream dead;
        connect_timeout 2s;
    }
    server {
        listen 127.0.0.1:%%PORT_3%%;
        router readconn;
        upstream capped;
    }
    server {
        listen 127.0.0.1:%%PORT_4%%;
        router readconn;
        upstream fake;
        connect_timeout 2s;
    }
}
EOF
(my $c = $conf) =~ s/%%CONNS%%/64/;
$t->write_file_expand('sluice.conf', $c);
$t->run;
$t->plan(39);

# --- login parameters --------------------------------------------------------

my $dbh = $t->dbh;
is($dbh && $dbh->selectrow_array('SELECT DATABASE()'), 'test',
   'the default database is the one asked for');
my $nodb = $t->dbh(database => undef);
ok($nodb && !defined $nodb->selectrow_array('SELECT DATABASE()'),
   'no database asked for, none selected');
undef $nodb;
my ($rc, $out, $err) = $t->mysql_cli(database => 'mysql',
    sql => 'SELECT DATABASE()');
is($out, "mysql\n", 'the mariadb client gets its database too') or diag($err);

for my $cs (qw(latin1 utf8mb4)) {
    ($rc, $out, $err) = $t->mysql_cli(args => [ "--default-character-set=$cs" ],
        sql => 'SELECT @@character_set_client, @@character_set_connection, '
             . '@@character_set_results');
    is($out, "$cs\t$cs\t$cs\n", "character set $cs reaches the backend")
        or diag($err);
}

ok(!$t->dbh(database => 'nosuchdb_' . $t->name),
   'an unknown database is refused');
is($DBI::err, 1049, "with the server's ERR 1049");
is($DBI::errstr, "Unknown database 'nosuchdb_" . $t->name . "'",
   "and the server's message");

# Connect attributes: the sandbox runs without performance_schema, so the
# backend here is this test, which reads what sluice sends at login.
my $mark = "kept-$$";
my $fdbh = $t->dbh(port => $t->port(4),
    mariadb_conn_attrs => { sluice_attr => $mark });
ok($fdbh && $fdbh->disconnect
   && wait_for(sub { $fake->saw(qr/^(?:eof|closed) 1$/) }),
   'sluice logged in to the fake backend');
my ($resp) = map { /^read 1 1 (\S+)$/ ? pack('H*', $1) : () } $fake->events;
my $attrs = defined $resp ? parse_attrs($resp) : undef;
is($attrs && $attrs->{sluice_attr}, $mark,
   'a connect attribute of the client reaches the backend');
is($attrs && $attrs->{_client_name}, 'libmariadb',
   'so do the client library\'s own');

# --- readconn_role -----------------------------------------------------------

is($dbh && join(',', $dbh->selectrow_array('SELECT @@server_id, @@port')),
   '1,' . $t->primary_port, 'readconn_role primary: on the primary');
my $rdbh = $t->dbh(port => $t->port(1));
is($rdbh && join(',', $rdbh->selectrow_array('SELECT @@server_id, @@port')),
   '2,' . $t->replica_port, 'readconn_role replica: on the replica');
undef $rdbh;

# --- a backend killed under a session ----------------------------------------

my $other = $t->dbh;
my $victim = $t->dbh;
my $id = $victim && $victim->selectrow_array('SELECT CONNECTION_ID()');
ok($id, 'a session to be killed');
my $off = length $t->error_log;
$t->primary_dbh->do("KILL $id");
# [error]: the sessions closed above with COM_QUIT log it as [info]
ok(wait_for(sub {
    substr($t->error_log, $off) =~ /\[error\].* backend closed connection/
}, what => 'sluice to see the backend go'),
   'sluice closes the session whose backend was killed');
ok(!defined $victim->selectrow_array('SELECT 1'),
   'the next query of that client fails');
like($victim->err // '', qr/^(?:2006|2013|1927)\z/,
     'as a lost connection') or diag($victim->errstr);
is($other && $other->selectrow_array('SELECT 5'), 5,
   'another session stays fine');
undef $victim;

# --- no server reachable -----------------------------------------------------

my @workers = $t->worker_pids;
# twice: the second time the server is marked down, and still tried
for my $try (1, 2) {
    my $e = login_err($t->port(2));
    is($e && "$e->{code} $e->{state}", '1429 HY000',
       "no server up: ERR 1429 on the wire ($try)");
}
ok(!$t->dbh(port => $t->port(2)), 'a client cannot log in');
is($DBI::err, 1429, 'and sees ERR 1429 (a server code: libmariadb '
    . 'reports client codes sent during login as a malformed packet)');
like($DBI::errstr, qr/^Can't connect to .*backend server/,
     'saying it cannot reach a backend');
ok($t->master_pid, 'the master still runs');
is_deeply([ $t->worker_pids ], \@workers, 'the worker did not die');
is($dbh && $dbh->selectrow_array('SELECT 6'), 6,
   'and still serves the sessions it had');

# --- max_connections ---------------------------------------------------------

my @capped = map { $t->dbh(port => $t->port(3)) } 1 .. 2;
ok($capped[0] && $capped[1], 'two sessions under max_connections=2');
ok(!$t->dbh(port => $t->port(3)), 'a third is refused');
is($DBI::err, 1040, 'with ERR 1040');
like($DBI::errstr, qr/^Too many connections/, '"Too many connections"');
undef @capped;
ok(wait_for(sub { $t->dbh(port => $t->port(3)) },
            what => 'a session once the others closed'),
   'closing the two frees their slots');

# --- worker_connections ------------------------------------------------------

undef $dbh;
undef $other;
$t->stop;
($c = $conf) =~ s/%%CONNS%%/3/;
$t->write_file_expand('sluice.conf', $c);
$t->run;

my @full = map { $t->dbh } 1 .. 3;
is(scalar(grep { $_ && $_->do('SELECT 1') } @full), 3,
   'three sessions with worker_connections 3');
ok(!$t->dbh, 'a fourth client is refused');
is($DBI::err, 1040, 'with ERR 1040');
is($DBI::errstr, 'Too many connections', '"Too many connections"');
($rc, $out, $err) = $t->mysql_cli(sql => 'SELECT 1');
# the client wraps an ERR received instead of the greeting in a 2002
like($err, qr/\b1040\b.*Too many connections/, 'the mariadb client says so');
ok($t->grep_log(qr/\[warn\].*worker_connections are not enough/),
   'sluice warns in its log');
is(scalar(grep { $_->selectrow_array('SELECT 1') } @full), 3,
   'the three sessions are not disturbed');
pop @full;
ok(wait_for(sub { $t->dbh }, what => 'a free slot'),
   'once one closes, a new client gets in');


# --- helpers -----------------------------------------------------------------

# lenenc integer at $$pos of $buf; advances $$pos.
sub lenenc {
    my ($buf, $pos) = @_;
    my $b = ord substr($buf, $$pos++, 1);
    return $b if $b < 0xfb;
    my $n = $b == 0xfc ? 2 : $b == 0xfd ? 3 : 8;
    my $v = 0;
    $v += ord(substr $buf, $$pos + $_, 1) << (8 * $_) for 0 .. $n - 1;
    $$pos += $n;
    return $v;
}

# HandshakeResponse41 -> { attribute => value }
sub parse_attrs {
    my ($r) = @_;
    my $caps = unpack 'V', $r;
    my $pos = 32;
    $pos = index($r, "\0", $pos) + 1;                       # user
    my $alen = $caps & 0x200000 ? lenenc($r, \$pos)
             : ord substr($r, $pos++, 1);
    $pos += $alen;                                          # auth
    $pos = index($r, "\0", $pos) + 1 if $caps & 0x8;        # database
    $pos = index($r, "\0", $pos) + 1 if $caps & 0x80000;    # plugin
    return {} unless $caps & 0x100000 && $pos < length $r;
    my $end = lenenc($r, \$pos);
    $end += $pos;
    my %a;
    while ($pos < $end) {
        my $kl = lenenc($r, \$pos);
        my $k = substr $r, $pos, $kl;
        $pos += $kl;
        my $vl = lenenc($r, \$pos);
        $a{$k} = substr $r, $pos, $vl;
        $pos += $vl;
    }
    return \%a;
}

# Log in as app on $port with a raw socket; the ERR that ends the login
# as { code, state, msg }, or undef.
sub login_err {
    my ($port) = @_;
    my $s = raw_login($port) // return undef;
    my $e = read_err($s);
    close $s;
    return $e;
}
