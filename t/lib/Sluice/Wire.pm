package Sluice::Wire;

# Raw MySQL protocol for the tests that play a client or a backend by
# hand, on plain blocking sockets: packet framing, the greeting, a
# mysql_native_password login, an ERR, and a backend's side of a login.
# Nothing here knows about Sluice::Test; ports are passed in.  Reads give
# up with undef (or an empty list) at EOF or after the socket's receive
# timeout; nothing here dies except when a connect fails.

use strict;
use warnings;

use Digest::SHA qw(sha1);
use Exporter qw(import);
use IO::Select;
use IO::Socket::INET;
use Time::HiRes qw(time);
use Socket qw(IPPROTO_TCP SO_RCVTIMEO TCP_CORK);

our @EXPORT_OK = qw(query_all read_n read_packet packet send_packet raw_connect
                    greeting_of parse_greeting build_greeting native_token
                    handshake_response raw_login read_err err_packet
                    serve_login accept_login hang_up wait_eof
                    read_response stmt_prepare stmt_execute
                    raw_session query read_result change_user
                    reset_connection);

use constant {
    CONNECT_TIMEOUT => 5,       # s for connect()
    READ_TIMEOUT    => 10,      # s of SO_RCVTIMEO on every socket made here
};

sub read_n {
    my ($s, $n) = @_;
    my $buf = '';
    while (length $buf < $n) {
        my $r = sysread($s, $buf, $n - length $buf, length $buf);
        return undef unless $r;
    }
    return $buf;
}

sub read_packet {
    my ($s) = @_;
    my $hdr = read_n($s, 4) // return ();
    my ($len, $seq) = (unpack('V', $hdr) & 0xffffff, ord substr $hdr, 3);
    my $pl = $len ? read_n($s, $len) : '';
    return defined $pl ? ($seq, $pl) : ();
}

sub packet {
    my ($seq, $pl) = @_;
    return substr(pack('V', length $pl), 0, 3) . chr($seq) . $pl;
}

sub send_packet {
    my ($s, $seq, $pl) = @_;
    syswrite($s, packet($seq, $pl));
}

sub hang_up {
    my ($s, $bytes) = @_;
    setsockopt($s, IPPROTO_TCP, TCP_CORK, 1);
    syswrite($s, $bytes);
    close $s;
}

sub wait_eof {
    my ($s, $secs) = @_;
    my $deadline = time + $secs;
    my $sel = IO::Select->new($s);
    while ((my $left = $deadline - time) > 0) {
        next unless $sel->can_read($left);
        my $r = sysread($s, my $buf, 65536);
        return 1 if defined $r && $r == 0;
        return 0 unless defined $r || $!{EINTR};
    }
    return 0;
}

sub raw_connect {
    my ($port) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port,
                                  Timeout => CONNECT_TIMEOUT)
        or die "connect to 127.0.0.1:$port: $!\n";
    $s->sockopt(SO_RCVTIMEO, pack('l!l!', READ_TIMEOUT, 0));
    return $s;
}

sub greeting_of {
    my ($port) = @_;
    my $s = raw_connect($port);
    my (undef, $pl) = read_packet($s);
    close $s;
    return $pl;
}

# Protocol 10: protocol, version NUL, thread id 4, scramble 8, filler,
# caps lower 2, charset, status 2, caps upper 2, auth data length,
# reserved 10, scramble 12 and more.
sub parse_greeting {
    my ($pl) = @_;
    # up to the upper caps at least, so that unpack cannot run off the end
    return undef unless defined $pl && $pl =~ /\A\x0a[^\0]*\0.{20}/s;
    my ($version, $thread_id, $s1, $lower, $upper, $rest) =
        unpack 'x Z* V a8 x v x x2 v a*', $pl;
    my $s2 = length $rest > 11 ? substr($rest, 11, 12) : '';
    # MariaDB's extended capabilities: the last 4 reserved bytes, when
    # CLIENT_MYSQL (bit 0) is not offered
    my $ext = !($lower & 1) && length $rest >= 11
        ? unpack('V', substr($rest, 7, 4)) : 0;
    return { version => $version, caps => $lower | $upper << 16,
             mariadb_caps => $ext, scramble => $s1 . $s2,
             thread_id => $thread_id };
}

# What a MariaDB 10.11 offers, less TLS and compression: PROTOCOL_41,
# SECURE_CONNECTION, PLUGIN_AUTH, CONNECT_ATTRS, DEPRECATE_EOF and the like.
use constant GREETING_CAPS => 0xf7df | 0x01ff << 16;

sub build_greeting {
    my (%o) = @_;
    my $scramble = $o{scramble} // join '', map { chr(0x21 + $_) } 0 .. 19;
    my $caps = $o{caps} // GREETING_CAPS;
    return "\x0a" . ($o{version} // '5.5.5-10.11.0-MariaDB-fake') . "\0"
        . pack('V', $o{thread_id} // 1) . substr($scramble, 0, 8) . "\0"
        . pack('v C v v C', $caps & 0xffff, $o{charset} // 45, 2,
               $caps >> 16, 21)
        . "\0" x 10 . substr($scramble, 8, 12) . "\0"
        . ($o{plugin} // 'mysql_native_password') . "\0";
}

sub native_token {
    my ($pw, $scramble) = @_;
    my $s1 = sha1($pw);
    return $s1 ^ sha1($scramble . sha1($s1));
}

sub handshake_response {
    my (%o) = @_;
    my $caps = 0x1 | 0x200 | 0x8000 | 0x80000 | (defined $o{db} ? 0x8 : 0)
        | ($o{caps} // 0);
    # MariaDB's extended capabilities go without CLIENT_MYSQL
    $caps &= ~1 if $o{mariadb_caps};
    return pack('V V C x19 V', $caps, $o{max_packet} // 16 << 20, 45,
                $o{mariadb_caps} // 0)
        . "$o{user}\0" . chr(length $o{token}) . $o{token}
        . (defined $o{db} ? "$o{db}\0" : '')
        . ($o{plugin} // 'mysql_native_password') . "\0";
}

sub raw_login {
    my ($port, %o) = @_;
    my $s = raw_connect($port);
    my (undef, $pl) = read_packet($s);
    my $g = parse_greeting($pl) or return undef;
    send_packet($s, 1, handshake_response(user => $o{user} // 'app',
        token => native_token($o{password} // 'secret', $g->{scramble}),
        max_packet => $o{max_packet}, mariadb_caps => $o{mariadb_caps},
        caps => $o{caps}));
    return $s;
}

sub read_response {
    my ($s) = @_;
    my ($seq, $pl) = read_packet($s);
    return undef unless defined $pl;
    my $bytes = packet($seq, $pl);
    return $bytes if ord $pl == 0 || ord $pl == 0xff;
    for (my $eofs = 0; $eofs < 2; ) {
        ($seq, $pl) = read_packet($s);
        return undef unless defined $pl;
        $bytes .= packet($seq, $pl);
        next unless ord $pl == 0xfe && length $pl < 9;
        $eofs++;
        # a cursor's result ends with the definitions (CURSOR_EXISTS)
        last if unpack('v', substr($pl, 3, 2)) & 0x40;
    }
    return $bytes;
}

sub stmt_prepare {
    my ($s, $sql) = @_;
    send_packet($s, 0, "\x16$sql");
    my (undef, $pl) = read_packet($s);
    return () unless defined $pl && ord $pl == 0 && length $pl >= 9;
    my ($id, $cols, $params) = unpack 'x V v v', $pl;
    for my $n (grep { $_ > 0 } $params, $cols) {
        read_packet($s) for 0 .. $n;        # the definitions and an EOF
    }
    return ($id, $params, $cols);
}

sub stmt_execute {
    my (%o) = @_;
    my @p = @{ $o{params} // [] };
    my $pl = pack 'C V C V', 0x17, $o{id}, $o{flags} // 0,
                  $o{iterations} // 1;
    return $pl unless @p;
    my $nulls = "\0" x int((@p + 7) / 8);
    vec($nulls, $_, 1) = 1 for grep { !defined $p[$_][1] } 0 .. $#p;
    my $bound = $o{bound} // 1;
    return $pl . $nulls . chr($bound)
        . ($bound ? join('', map { pack 'v', $_->[0] } @p) : '')
        . join('', map { $_->[1] // '' } @p);
}

sub read_err {
    my ($s) = @_;
    my ($seq, $pl) = read_packet($s);
    return undef unless defined $pl && ord($pl) == 0xff;
    my ($code, $state, $msg) = unpack 'x v x a5 a*', $pl;
    return { code => $code, state => $state, msg => $msg };
}

sub err_packet {
    my ($code, $state, $msg) = @_;
    return pack('C v', 0xff, $code) . "#$state$msg";
}

sub serve_login {
    my ($s, $greeting) = @_;
    send_packet($s, 0, $greeting);
    my (undef, $resp) = read_packet($s);
    send_packet($s, 2, "\0\0\0\2\0\0\0");
    return $resp;
}

sub accept_login {
    my ($listener, $greeting) = @_;
    return () unless IO::Select->new($listener)->can_read(READ_TIMEOUT);
    my $s = $listener->accept or return ();
    $s->sockopt(SO_RCVTIMEO, pack('l!l!', READ_TIMEOUT, 0));
    return ($s, serve_login($s, $greeting));
}

# A logged-in raw session: { sock => S, scramble => the greeting's, id =>
# its thread id (sluice's session id) } or undef when the login failed
# (then { err => ... } in list context's second value).  Options as
# raw_login's (caps => X among them), and db => D, charset => N.
sub raw_session {
    my ($port, %o) = @_;
    my $s = raw_connect($port);
    my (undef, $pl) = read_packet($s);
    my $g = parse_greeting($pl) or return undef;
    my $resp = handshake_response(user => $o{user} // 'app',
        token => native_token($o{password} // 'secret', $g->{scramble}),
        db => $o{db}, max_packet => $o{max_packet},
        mariadb_caps => $o{mariadb_caps}, caps => $o{caps});
    substr($resp, 8, 1) = chr($o{charset}) if defined $o{charset};
    send_packet($s, 1, $resp);
    my (undef, $ok) = read_packet($s);
    return undef unless defined $ok && ord $ok == 0;
    return { sock => $s, scramble => $g->{scramble},
             id => $g->{thread_id} };
}

sub _lenenc {
    my ($buf, $pos) = @_;
    my $c = ord substr($$buf, $$pos++, 1);
    return $c if $c < 0xfb;
    return undef if $c == 0xfb;
    my $n = $c == 0xfc ? 2 : $c == 0xfd ? 3 : 8;
    my $v = unpack('Q<', substr($$buf, $$pos, $n) . "\0" x (8 - $n));
    $$pos += $n;
    return $v;
}

sub _ok_fields {
    my ($pl) = @_;
    my $pos = 1;
    my $affected = _lenenc(\$pl, \$pos);
    my $insert_id = _lenenc(\$pl, \$pos);
    my ($status, $warnings) = unpack 'v v', substr($pl, $pos, 4);
    return { affected => $affected, insert_id => $insert_id,
             status => $status, warnings => $warnings };
}

# COM_QUERY on a session logged in here (no DEPRECATE_EOF, no multi
# results): { ok => {affected, insert_id, status, warnings} },
# { err => {code, state, msg} }, or { cols => N, rows => [[...]], status
# => S, warnings => W } (NULL is undef); undef when the connection broke.
sub query {
    my ($s, $sql) = @_;
    send_packet($s, 0, "\x03$sql") or return undef;
    return _result($s);
}

# read_result($s): the next command's result, as query() returns it (for
# a client that pipelined its commands).
sub read_result { return _result($_[0]) }

# query_all($s, $sql): a multi-statement (the session negotiated
# CLIENT_MULTI_STATEMENTS | CLIENT_MULTI_RESULTS, caps => 0x30000): every
# result is read; the last one is returned, as query() returns one, or
# the first ERR (which ends the statements).
sub query_all {
    my ($s, $sql) = @_;
    send_packet($s, 0, "\x03$sql") or return undef;
    my $r;
    do {
        $r = _result($s);
    } while ($r && !$r->{err}
             && (($r->{ok} ? $r->{ok}{status} : $r->{status}) & 0x08));
    return $r;
}

sub _result {
    my ($s) = @_;
    my ($seq, $pl) = read_packet($s);
    return undef unless defined $pl;
    if (ord $pl == 0xff) {
        my ($code, $state, $msg) = unpack 'x v x a5 a*', $pl;
        return { err => { code => $code, state => $state, msg => $msg } };
    }
    return { ok => _ok_fields($pl) } if ord $pl == 0;
    my $pos = 0;
    my $ncols = _lenenc(\$pl, \$pos);
    for (0 .. $ncols) {                 # definitions and their EOF
        ($seq, $pl) = read_packet($s);
        return undef unless defined $pl;
    }
    my @rows;
    for (;;) {
        ($seq, $pl) = read_packet($s);
        return undef unless defined $pl;
        if (ord $pl == 0xfe && length $pl < 9) {
            my ($warnings, $status) = unpack 'x v v', $pl;
            return { cols => $ncols, rows => \@rows, status => $status,
                     warnings => $warnings };
        }
        if (ord $pl == 0xff) {
            my ($code, $state, $msg) = unpack 'x v x a5 a*', $pl;
            return { err => { code => $code, state => $state,
                              msg => $msg }, rows => \@rows };
        }
        my ($p, @row) = (0);
        while ($p < length $pl) {
            my $n = _lenenc(\$pl, \$p);
            push @row, defined $n ? substr($pl, $p, $n) : undef;
            $p += $n // 0;
        }
        push @rows, \@row;
    }
}

# COM_CHANGE_USER on a raw_session: { ok => ... } or { err => ... }
# (undef: the connection broke).  A server's auth switch to
# mysql_native_password is answered.
sub change_user {
    my ($rs, %o) = @_;
    my $s = $rs->{sock};
    my $pw = $o{password} // '';
    my $token = length $pw ? native_token($pw, $rs->{scramble}) : '';
    send_packet($s, 0, "\x11" . ($o{user} // 'app') . "\0"
        . chr(length $token) . $token . ($o{db} // '') . "\0"
        . pack('v', $o{charset} // 45) . "mysql_native_password\0");
    my ($seq, $pl) = read_packet($s);
    return undef unless defined $pl;
    if (ord $pl == 0xfe) {
        my ($plugin, $data) = $pl =~ /\A\xfe([^\0]*)\0(.*)\z/s;
        $data =~ s/\0\z//;
        $rs->{scramble} = $data;
        send_packet($s, $seq + 1, length $pw ? native_token($pw, $data) : '');
        ($seq, $pl) = read_packet($s);
        return undef unless defined $pl;
    }
    if (ord $pl == 0xff) {
        my ($code, $state, $msg) = unpack 'x v x a5 a*', $pl;
        return { err => { code => $code, state => $state, msg => $msg } };
    }
    return ord $pl == 0 ? { ok => _ok_fields($pl) } : undef;
}

# COM_RESET_CONNECTION: { ok => ... } or { err => ... }.
sub reset_connection {
    my ($rs) = @_;
    my $s = ref $rs eq 'HASH' ? $rs->{sock} : $rs;
    send_packet($s, 0, "\x1f") or return undef;
    my (undef, $pl) = read_packet($s);
    return undef unless defined $pl;
    if (ord $pl == 0xff) {
        my ($code, $state, $msg) = unpack 'x v x a5 a*', $pl;
        return { err => { code => $code, state => $state, msg => $msg } };
    }
    return ord $pl == 0 ? { ok => _ok_fields($pl) } : undef;
}

1;

__END__

=head1 NAME

Sluice::Wire - raw MySQL protocol helpers for sluice integration tests

=head1 SYNOPSIS

    use Sluice::Wire qw(raw_login read_packet send_packet read_err);

    my $s = raw_login($t->port(0)) or die "no greeting\n";
    my (undef, $ok) = read_packet($s);          # the answer to the login
    send_packet($s, 0, "\x03SELECT 1");

=head1 DESCRIPTION

Nothing is exported by default; ask for what you use.  Sockets made here
connect to 127.0.0.1 within 5 s (or die) and have a 10 s receive timeout
(SO_RCVTIMEO), so a read that gets nothing gives up instead of hanging.

=over

=item read_n($sock, $n)

Exactly $n bytes, or undef at EOF, error or timeout.

=item read_packet($sock)

One packet: ($seq, $payload), or the empty list at EOF or timeout.  A
payload of 0xffffff bytes is returned as it is; the caller joins the
packets of a long message.

=item packet($seq, $payload)

The bytes of one packet: the 3-byte length, $seq, $payload.

=item send_packet($sock, $seq, $payload)

Writes one packet (header and $payload, under 16 MiB) with one syswrite
and returns what syswrite returned.

=item hang_up($sock, $bytes)

Writes $bytes and closes, the FIN in the same segment as the bytes
(TCP_CORK holds them until close() adds the FIN), so that the peer learns
both from one event.

=item wait_eof($sock, $secs)

True if the peer closes within $secs seconds (a read returns EOF); what
comes before is read and dropped.  False on a timeout or a read error
(a reset is not a clean close).

=item raw_connect($port)

A socket connected to 127.0.0.1:$port, nothing read yet.

=item greeting_of($port)

Connects, reads the first packet and closes: that payload (normally the
greeting), or undef.

=item parse_greeting($payload)

A protocol-10 greeting as C<< { version, caps, mariadb_caps, scramble,
thread_id } >>: caps with the upper 16 bits joined in, mariadb_caps
MariaDB's extended ones (0 when CLIENT_MYSQL is offered), scramble the
20 bytes of both parts, thread_id the connection id (sluice's session
id, which its log lines carry as *ID).  Undef if $payload is not a
protocol-10 greeting (an ERR instead, say).

=item build_greeting(version => V, thread_id => N, scramble => S, caps => C, ...)

A protocol-10 greeting payload such as a MariaDB server sends, for a
test that plays the backend: the capabilities of a MariaDB 10.11 without
TLS or compression, charset 45, autocommit, mysql_native_password, a
fixed printable scramble (S: 20 bytes), unless given; charset => N and
plugin => P too.

=item native_token($password, $scramble)

The mysql_native_password auth response:
SHA1(password) XOR SHA1(scramble . SHA1(SHA1(password))).

=item handshake_response(user => U, token => T, db => D, plugin => P, max_packet => N, mariadb_caps => C, caps => X)

A HandshakeResponse41 payload with LONG_PASSWORD, PROTOCOL_41,
SECURE_CONNECTION, PLUGIN_AUTH, and CONNECT_WITH_DB if db is given;
with caps, those capability bits too (0x10000 | 0x20000: MULTI_STATEMENTS
and MULTI_RESULTS, whose answers query does not read: read_packet them);
charset 45 (utf8mb4), max_packet 16 MiB unless given, plugin
mysql_native_password unless given.  With mariadb_caps, those MariaDB
extended capabilities (CLIENT_MYSQL then unset), e.g. 0x10 for
CACHE_METADATA.  No DEPRECATE_EOF, so a result set
ends with an EOF packet.

=item raw_login($port, user => 'app', password => 'secret', max_packet => N, mariadb_caps => C, caps => X)

Connects, reads the greeting and sends a mysql_native_password login
(seq 1) for user and password (app/secret unless given).  Returns the
socket, whose next packet answers the login, or undef if no greeting
came.

=item read_response($sock)

The whole response to a command as wire bytes: an OK or an ERR, or a
result set (text or binary) without DEPRECATE_EOF: up to its second EOF,
or its first when that says a cursor is open (SERVER_STATUS_CURSOR_EXISTS).
Undef at EOF or timeout.

=item stmt_prepare($sock, $sql)

Sends COM_STMT_PREPARE and reads its response (the definitions that
follow the PREPARE_OK, each list with its EOF, are read and dropped):
($id, $params, $columns), or the empty list on an ERR.

=item stmt_execute(id => N, params => [[TYPE, BYTES], ...], bound => 0|1, flags => F, iterations => N)

A COM_STMT_EXECUTE payload: TYPE a MYSQL_TYPE_* number (with 0x8000 for
unsigned), BYTES the value as the binary protocol encodes it, undef for a
NULL (its bit in the NULL bitmap).  With bound => 0 (new-params-bound-flag
0) no types are sent: the server uses the last bound.  Flags 0 (no
cursor) and an iteration count of 1 unless given.

=item raw_session($port, user => U, password => P, db => D, charset => N, caps => X)

Log in and read the server's OK: { sock => S, scramble => the greeting's
scramble, id => its thread id } or undef.  With caps, more capability
bits (handshake_response).

=item query($sock, $sql)

A COM_QUERY and its answer: { ok => {affected, insert_id, status,
warnings} }, { err => {code, state, msg} }, or { cols => N, rows =>
[[...]], status => S, warnings => W } with NULL as undef.

=item change_user($session, user => U, password => P, db => D, charset => N)

COM_CHANGE_USER on a raw_session (answering an auth switch): { ok => ... }
or { err => ... }.

=item reset_connection($session)

COM_RESET_CONNECTION: { ok => ... } or { err => ... }.

=item read_err($sock)

Reads a packet; if it is an ERR, C<< { code, state, msg } >>, else undef.

=item err_packet($code, $state, $message)

An ERR payload (with the SQL state marker), for a test that plays the
backend.

=item serve_login($sock, $greeting)

A backend's side of a login on a connected socket: sends $greeting
(seq 0), reads the handshake response and answers OK (seq 2) whatever it
holds.  Returns the response payload, undef if none came.

=item accept_login($listener, $greeting)

Plays a backend's side of a login on a listening socket: waits up to
10 s for a connection and plays serve_login on it.  Returns ($sock,
$response) with $response undef if none came, or the empty list if
nothing connected.

=back

=cut
