package Sluice::FakeBackend;

# A scripted MySQL backend, for the tests that need a server to misbehave
# in one precise way: silent, refusing, sending garbage, hanging up in the
# middle of a login.  It listens on a loopback port; a forked child accepts,
# and each connection is served by a process of its own that runs the
# script, so a silent connection does not hold up the next one.  What the
# connections saw goes to an event log the test reads (see saw()).  The
# processes are killed when the object goes away or at the latest in END.
# The protocol pieces come from Sluice::Wire.

use strict;
use warnings;

use Carp qw(croak);
use Errno qw(EAGAIN EINTR EWOULDBLOCK);
use File::Temp qw(tempdir);
use IO::Select;
use IO::Socket::INET;
use POSIX ();
use Scalar::Util qw(weaken);
use Socket qw(SO_RCVTIMEO);

use Sluice::Wire qw(read_packet send_packet build_greeting serve_login
                    hang_up);

use constant POLL => 1;     # s between checks that the test still runs

my @LIVE;                   # weak refs, stopped in END

sub new {
    my ($class, %o) = @_;
    my $port = $o{port} // croak 'port => N is required';
    my @script = map { ref $_ ? $_ : [$_] }
                 @{ $o{script} // [ 'login', 'silent' ] };
    for (@script) {
        croak "unknown step $_->[0]" unless __PACKAGE__->can("_step_$_->[0]");
    }
    my $listener = IO::Socket::INET->new(LocalAddr => '127.0.0.1',
        LocalPort => $port, Listen => 64, ReuseAddr => 1)
        or die "fake backend: listen on 127.0.0.1:$port: $!\n";
    my $dir = tempdir('fakebackend-XXXXXX', TMPDIR => 1, CLEANUP => 1);
    my $self = bless {
        port     => $port,
        events   => "$dir/events",
        dir      => $dir,
        owner    => $$,
        greeting => $o{greeting} // build_greeting(),
        script   => \@script,
    }, $class;
    open(my $fh, '>', $self->{events}) or die "$self->{events}: $!\n";
    close $fh;
    my $pid = fork // die "fork: $!\n";
    if ($pid == 0) {
        setpgrp(0, 0);          # one group: stop() kills them all
        $self->_accept_loop($listener, getppid());
        POSIX::_exit(0);
    }
    close $listener;            # once stopped, the port refuses
    $self->{pid} = $pid;
    push @LIVE, $self;
    weaken($LIVE[-1]);
    return $self;
}

sub port { $_[0]{port} }

# The event lines so far: "accept N", "read N SEQ HEX", "expect N ok",
# "expect N failed: HEX", "eof N" (the peer closed; N counts connections
# from 1), "closed N" (the script closed).
sub events {
    my ($self) = @_;
    open(my $fh, '<', $self->{events}) or return ();
    chomp(my @l = <$fh>);
    return @l;
}

# Event lines matching $re; in scalar context, how many.
sub saw {
    my ($self, $re) = @_;
    my @l = grep { $_ =~ $re } $self->events;
    return wantarray ? @l : scalar @l;
}

# Kill every process of this backend; the port refuses from now on.
sub stop {
    my ($self) = @_;
    my $pid = delete $self->{pid};
    return unless $pid && $self->{owner} == $$;
    kill 'KILL', -$pid;         # the group, if setpgrp ran already
    kill 'KILL', $pid;
    waitpid($pid, 0);
}

sub DESTROY { $_[0]->stop }

END { $_ && $_->stop for @LIVE }


# --- the child -----------------------------------------------------------

sub _event {
    my ($self, $line) = @_;
    # one write with O_APPEND: lines of several processes do not mix
    open(my $fh, '>>', $self->{events}) or return;
    syswrite($fh, "$line\n");
    close $fh;
}

sub _accept_loop {
    my ($self, $listener, $test) = @_;
    my $sel = IO::Select->new($listener);
    my $n = 0;
    $SIG{CHLD} = 'IGNORE';      # connection processes reap themselves
    while (getppid() == $test) {
        next unless $sel->can_read(POLL);
        my $s = $listener->accept or next;
        $self->_event('accept ' . ++$n);
        my $pid = fork;
        if (defined $pid && $pid == 0) {
            close $listener;
            $self->_serve($s, $n, getppid());
            POSIX::_exit(0);
        }
        close $s;
    }
}

sub _serve {
    my ($self, $s, $n, $server) = @_;
    $s->sockopt(SO_RCVTIMEO, pack('l!l!', POLL, 0));
    $self->{conn} = { sock => $s, n => $n, server => $server };
    for my $step (@{ $self->{script} }) {
        my ($name, @args) = @$step;
        my $m = "_step_$name";
        return unless $self->$m(@args);
    }
    $self->_step_close;
}

sub _alive { getppid() == $_[0]{conn}{server} }

# A packet, waiting as long as the test runs; () at EOF.
sub _read_packet {
    my ($self) = @_;
    my $s = $self->{conn}{sock};
    while ($self->_alive) {
        local $! = 0;           # EOF leaves errno alone
        my @p = read_packet($s);
        return @p if @p;
        # a receive timeout is EAGAIN; sluice writes whole packets, so it
        # comes before the first byte of one, and nothing is lost
        return () unless $! == EAGAIN || $! == EWOULDBLOCK || $! == EINTR;
    }
    return ();
}

# Steps: each returns true to go on with the script.

sub _step_greeting {
    my ($self, $payload) = @_;
    send_packet($self->{conn}{sock}, 0, $payload // $self->{greeting});
    return 1;
}

sub _step_login {
    my ($self) = @_;
    my $resp = serve_login($self->{conn}{sock}, $self->{greeting});
    return $self->_eof unless defined $resp;
    $self->_event("read $self->{conn}{n} 1 " . unpack 'H*', $resp);
    return 1;
}

sub _step_send {
    my ($self, $bytes) = @_;
    return defined syswrite($self->{conn}{sock}, $bytes);
}

sub _step_packet {
    my ($self, $seq, $payload) = @_;
    return defined send_packet($self->{conn}{sock}, $seq, $payload);
}

sub _step_hang_up {
    my ($self, $bytes) = @_;
    hang_up($self->{conn}{sock}, $bytes);
    $self->_event("closed $self->{conn}{n}");
    return 0;
}

sub _step_read {
    my ($self) = @_;
    my ($seq, $pl) = $self->_read_packet;
    return $self->_eof unless defined $pl;
    $self->_event("read $self->{conn}{n} $seq " . unpack 'H*', $pl);
    return 1;
}

sub _step_expect {
    my ($self, $re) = @_;
    my ($seq, $pl) = $self->_read_packet;
    return $self->_eof unless defined $pl;
    $self->_event("expect $self->{conn}{n} "
        . ($pl =~ $re ? 'ok' : 'failed: ' . unpack 'H*', $pl));
    return 1;
}

# OK to every command, until COM_QUIT or EOF.
sub _step_answer_ok {
    my ($self) = @_;
    while (1) {
        my ($seq, $pl) = $self->_read_packet;
        return $self->_eof unless defined $pl;
        $self->_event("read $self->{conn}{n} $seq " . unpack 'H*', $pl);
        return 1 if $pl eq "\x01";
        send_packet($self->{conn}{sock}, $seq + 1, "\0\0\0\2\0\0\0");
    }
}

# OK to every command until one matches $re, which gets $payload (an ERR,
# say) instead; the next step follows.
sub _step_ok_until {
    my ($self, $re, $payload) = @_;
    while (1) {
        my ($seq, $pl) = $self->_read_packet;
        return $self->_eof unless defined $pl;
        $self->_event("read $self->{conn}{n} $seq " . unpack 'H*', $pl);
        if ($pl =~ $re) {
            return defined send_packet($self->{conn}{sock}, $seq + 1,
                                       $payload);
        }
        send_packet($self->{conn}{sock}, $seq + 1, "\0\0\0\2\0\0\0");
    }
}

# Say nothing and read nothing that matters until the peer hangs up.
sub _step_silent {
    my ($self) = @_;
    my $s = $self->{conn}{sock};
    while ($self->_alive) {
        my $r = sysread($s, my $buf, 4096);
        next if $r || (!defined $r && ($! == EAGAIN || $! == EWOULDBLOCK
                                       || $! == EINTR));
        return $self->_eof;         # 0 or ECONNRESET
    }
    return 0;
}

sub _step_sleep {
    my ($self) = @_;
    sleep POLL while $self->_alive;
    return 0;
}

sub _step_close {
    my ($self) = @_;
    close $self->{conn}{sock};
    $self->_event("closed $self->{conn}{n}");
    return 0;
}

sub _eof {
    my ($self) = @_;
    $self->_event("eof $self->{conn}{n}");
    return 0;
}

1;

__END__

=head1 NAME

Sluice::FakeBackend - a scripted MySQL server for sluice integration tests

=head1 SYNOPSIS

    use Sluice::FakeBackend;
    use Sluice::Wire qw(err_packet);

    my $fb = Sluice::FakeBackend->new(port => $t->port(10),
        script => [ [ packet => 0, err_packet(1129, 'HY000', 'blocked') ] ]);
    ...
    ok(wait_for(sub { $fb->saw(qr/^eof 1$/) }), 'sluice hung up');
    $fb->stop;      # or let it go out of scope

=head1 DESCRIPTION

new(port => N, script => [...], greeting => PAYLOAD) listens on
127.0.0.1:N and serves every connection it accepts with the script, each
in a process of its own; when the script ends the connection is closed.
The greeting is Sluice::Wire's build_greeting() unless given.  Steps are
names, or array refs of a name and its arguments:

=over

=item greeting, [greeting => PAYLOAD]

Send the greeting (seq 0).

=item login

Sluice::Wire's serve_login: greeting, read the handshake response (logged
as a read with seq 1), OK.

=item [send => BYTES]

Write raw bytes, framed or not.

=item [packet => SEQ, PAYLOAD]

Write one packet.

=item [hang_up => BYTES]

Sluice::Wire's hang_up: write raw bytes and close, the FIN in the same
segment as the bytes, as a server that sends an ERR and hangs up at once.

=item read

Read one packet and log it as C<read N SEQ HEX>.

=item [expect => qr/.../]

Read one packet and log C<expect N ok> if its payload matches, else
C<expect N failed: HEX>.

=item answer_ok

Answer OK to every command (each logged as a read) until COM_QUIT or EOF.

=item silent

Send nothing, read and drop whatever comes until the peer hangs up.

=item sleep

Do nothing until the backend is stopped (the connection stays open,
unread).

=item close

Close the connection.

=back

A step that meets EOF logs C<eof N> and ends the script.  Every
connection logs C<accept N> first, N counting from 1; events() returns
the lines, saw(qr//) those that match (their number in scalar context).
stop() kills the processes; from then on the port refuses connections.
A backend stops by itself when the test process exits.

=cut
