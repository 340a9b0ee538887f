package SluiceBench::Target::Direct;

# The sandbox primary itself, over its TCP port and its unix socket: the
# baseline every proxy is compared with.  Nothing to start; no proxy CPU.

use strict;
use warnings;

use parent -norequire, 'SluiceBench::Target';

sub is_proxy { 0 }
sub label    { 'direct to MariaDB' }

sub start {
    my ($self) = @_;
    my $p = $self->{ctx}{primary};
    @$self{qw(port unix)} = ($p->{port}, $p->{socket});
    return $self;
}

sub stop { $_[0] }

sub version { $_[0]{ctx}{versions}{mariadb} }

1;
