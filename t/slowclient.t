#!/usr/bin/perl

# Backpressure: a client that does not read a 200 MiB result, and a
# backend that does not read a 50 MiB query, make sluice stop reading the
# other side.  The worker's memory stays bounded while they stall, and
# everything arrives once they read again.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Digest::SHA qw(sha1);
use Errno qw(EAGAIN EWOULDBLOCK);
use IO::Select;
use IO::Socket::INET;
use Test::More;
use Sluice::Test;
use Sluice::Wire qw(read_packet send_packet greeting_of raw_login
                    accept_login);

use constant {
    ROWS      => 200_000,           # of 1000 bytes: 200 MiB
    QUERY     => 50 << 20,          # bytes of the big COM_QUERY
    BOUND_KB  => 16 << 10,          # growth allowed while stalled
    STILL     => 1.0,               # s without progress: stalled
};

my $t = Sluice::Test->new;
$t->has('readconn');

# port 8: a backend played by this test, which can stop reading
my $fake = IO::Socket::INET->new(LocalAddr => '127.0.0.1',
    LocalPort => $t->port(8), Listen => 4, ReuseAddr => 1)
    or die "listen on port 8: $!\n";

$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
mysql {
    buffer_size 16k;
    user app { password "secret"; }
    upstream cluster { server %%PRIMARY%% role=primary; }
    upstream fake { server 127.0.0.1:%%PORT_8%% role=primary; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        upstream fake;
    }
}
EOF
$t->run;
$t->plan(13);

my ($worker) = $t->worker_pids;

# --- a client that does not read ---------------------------------------------

my $dbh = $t->dbh;
ok($dbh && $dbh->selectrow_array('SELECT COUNT(*) FROM seq_1_to_1000'),
   'a session through sluice') or diag($DBI::errstr);
undef $dbh;

# A raw client, so that nothing reads behind the test's back (DBD::MariaDB
# here returns no rows at all with mariadb_use_result).
my $c = client_login($t->port(0));
my (undef, $ok) = read_packet($c);
ok(defined $ok && ord($ok) == 0, 'a raw client logs in through sluice');
my $base = $t->rss_kb($worker);
send_packet($c, 0, "\x03SELECT seq, REPEAT('x', 1000) FROM test.seq_1_to_"
    . ROWS);

# Now the client reads nothing.  Stalled: the bytes queued in the kernel
# at either side of sluice stay the same for STILL seconds.
my ($max, $to_backend) = watch_stall(sub {
    my %q = worker_queues($worker);
    my $cq = $q{ 'c' . $t->port(0) . ':' . $c->sockport };
    my $bq = $q{ 'b' . $t->primary_port };
    return ($cq && $bq) ? "$cq->{tx}/$bq->{rx}" : undef;
}, sub {
    my %q = worker_queues($worker);
    my $bq = $q{ 'b' . $t->primary_port };
    return $bq ? $bq->{rx} : 0;
});
note("RSS $base kB before, up to $max kB while the client stalled; "
    . "$to_backend bytes unread in sluice's backend socket");
ok($to_backend, 'the result stalls, with bytes left unread in sluice\'s '
   . 'backend socket: sluice stopped reading the server');
cmp_ok($max - $base, '<', BOUND_KB,
       'the worker grew by less than 16 MiB while the client stalled')
    or diag("RSS $base kB before, up to $max kB while stalled");

my ($n, $last) = read_result($c);
is($n, ROWS, 'once the client reads again, all 200 000 rows arrive');
is($last, chr(length ROWS) . ROWS . "\xfc\xe8\x03" . ('x' x 1000),
   'the last one whole');
send_packet($c, 0, "\x03SELECT 8");
($n, $last) = read_result($c);
is($last, "\x018", 'and the session goes on');
close $c;

# --- a backend that does not read --------------------------------------------

my $client = client_login($t->port(1));

# sluice logs in to the fake backend: the primary's own greeting, then OK
my ($back) = accept_login($fake, greeting_of($t->primary_port)
                                 // die "no greeting from the primary\n");
(my $seq, $ok) = read_packet($client);
ok($back && defined $ok && $ok eq "\0\0\0\2\0\0\0",
   'a raw client logs in through sluice to the fake backend');
$base = $t->rss_kb($worker);

# COM_QUERY of 50 MiB: three full packets and the rest
my $payload = "\x03" . random_bytes(QUERY - 1);
my $wire = '';
for (my ($off, $i) = (0, 0); ; $i++) {
    my $chunk = substr $payload, $off, 0xffffff;
    $wire .= substr(pack('V', length $chunk), 0, 3) . chr($i) . $chunk;
    $off += length $chunk;
    last if length $chunk < 0xffffff;
}
$client->blocking(0);
my $sent = 0;
($max, my $from_client) = watch_stall(sub {
    while ($sent < length $wire) {
        my $w = syswrite($client, $wire, length($wire) - $sent, $sent);
        last unless $w;
        $sent += $w;
    }
    return $sent;
}, sub {
    my %q = worker_queues($worker);
    my $c = $q{ 'c' . $t->port(1) . ':' . $client->sockport };
    return $c ? $c->{rx} : 0;
});
note("RSS $base kB before, up to $max kB while the backend stalled; "
    . "$sent bytes sent, $from_client unread in sluice's client socket");
ok($sent < length $wire && $from_client,
   'the query stalls, with bytes left unread in sluice\'s client socket: '
   . 'sluice stopped reading the client') or diag("sent $sent bytes");
cmp_ok($max - $base, '<', BOUND_KB,
       'the worker grew by less than 16 MiB while the backend stalled')
    or diag("RSS $base kB before, up to $max kB while stalled");

# The backend reads again: everything arrives, and its OK goes back.
my ($got, $sha) = drain($back, $client, \$sent, $wire);
is($got, QUERY, 'once the backend reads again, the 50 MiB arrive');
ok($sha eq sha1($payload), 'byte for byte');
send_packet($back, 1, "\0\0\0\2\0\0\0");
$client->blocking(1);
($seq, $ok) = read_packet($client);
ok(defined $ok && ord($ok) == 0 && $seq == 1,
   'the backend\'s OK reaches the client');
close $client;
close $back if $back;


# --- helpers -----------------------------------------------------------------

# Connect to $port and send app's handshake response: the socket, whose
# next packet is the answer to the login.  No DEPRECATE_EOF (see
# handshake_response in Sluice::Wire), so a result set ends with an EOF
# packet, as read_result expects.
sub client_login {
    my ($port) = @_;
    return raw_login($port, max_packet => 1 << 30)
        // die "no greeting on port $port\n";
}

# Read a text result set: (rows, payload of the last row).
sub read_result {
    my ($s) = @_;
    my ($buf, $phase, $rows, $last) = ('', 0, 0, undef);
    while (1) {
        while (length $buf >= 4) {
            my $plen = unpack('V', $buf) & 0xffffff;
            last if length $buf < 4 + $plen;
            my $pl = substr $buf, 4, $plen;
            substr($buf, 0, 4 + $plen) = '';
            my $eof = $plen < 9 && ord($pl) == 0xfe;
            return (0, $pl) if $phase == 0 && ord($pl) == 0xff;
            if ($phase == 0) { $phase = 1 }             # column count
            elsif ($phase == 1) { $phase = 2 if $eof }  # definitions
            elsif ($eof) { return ($rows, $last) }
            else { $rows++; $last = $pl }
        }
        my $r = sysread($s, $buf, 1 << 20, length $buf);
        return ($rows, undef) unless $r;
    }
}

# Poll every 20 ms until state() has not changed for STILL seconds (30 s
# at most), sampling the worker's RSS each time; then, once stalled, ask
# check().  Returns (highest RSS in kB, check's answer).
sub watch_stall {
    my ($state, $check) = @_;
    my ($max, $prev, $since) = (0, undef, time);
    my $stalled = wait_for(sub {
        my $rss = $t->rss_kb($worker) // 0;
        $max = $rss if $rss > $max;
        my $now = $state->();
        if (!defined $now || !defined $prev || $now ne $prev) {
            ($prev, $since) = ($now, time);
            return 0;
        }
        return time - $since >= STILL;
    }, timeout => 30, what => 'the transfer to stall');
    return ($max, $stalled && $check->());
}

# Read the whole COM_QUERY at the backend while the client writes the rest.
# Returns (payload bytes, SHA1 of the payload).
sub drain {
    my ($back, $client, $sent, $wire) = @_;
    my $digest = Digest::SHA->new(1);
    my ($buf, $total, $done) = ('', 0, 0);
    my $sel = IO::Select->new($back);
    my $deadline = time + 60;
    while (!$done && time < $deadline) {
        if ($$sent < length $wire) {
            my $w = syswrite($client, $wire, length($wire) - $$sent, $$sent);
            $$sent += $w if $w;
        }
        next unless $sel->can_read(0.02);
        my $r = sysread($back, $buf, 1 << 20, length $buf);
        last unless $r;
        # whole packets: header, then payload
        while (length $buf >= 4) {
            my $plen = unpack('V', $buf) & 0xffffff;
            last if length $buf < 4 + $plen;
            $digest->add(substr $buf, 4, $plen);
            $total += $plen;
            substr($buf, 0, 4 + $plen) = '';
            if ($plen < 0xffffff) { $done = 1; last }
        }
    }
    return ($total, $digest->digest);
}

# The kernel's queues of the worker's TCP sockets: "cLOCALPORT:PEERPORT"
# for its client connections, "bPEERPORT" for its backend connections to
# that port, each => { tx, rx } in bytes.
sub worker_queues {
    my ($pid) = @_;
    my %mine;
    opendir(my $d, "/proc/$pid/fd") or return ();
    for my $fd (readdir $d) {
        my $l = readlink("/proc/$pid/fd/$fd") // next;
        $mine{$1} = 1 if $l =~ /^socket:\[(\d+)\]/;
    }
    my %q;
    for my $f ('/proc/net/tcp', '/proc/net/tcp6') {
        open(my $fh, '<', $f) or next;
        while (<$fh>) {
            my @f = split ' ';
            next unless @f > 9 && $mine{ $f[9] };
            my ($lp) = $f[1] =~ /:([0-9A-F]+)\z/;
            my ($rp) = $f[2] =~ /:([0-9A-F]+)\z/;
            my ($tx, $rx) = map { hex } split /:/, $f[4];
            my $key = hex($lp) == $t->port(0) || hex($lp) == $t->port(1)
                ? 'c' . hex($lp) . ':' . hex($rp) : 'b' . hex($rp);
            # a backend socket of a closed session may linger: add up
            $q{$key}{tx} += $tx;
            $q{$key}{rx} += $rx;
        }
    }
    return %q;
}

sub random_bytes {
    my ($n) = @_;
    open(my $fh, '<:raw', '/dev/urandom') or die "/dev/urandom: $!\n";
    my $got = read($fh, my $buf, $n);
    die "short read from /dev/urandom\n" unless $got && $got == $n;
    return $buf;
}
