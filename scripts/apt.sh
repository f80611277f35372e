# scripts/apt.sh - install the Debian packages that are missing, waiting
# for another apt or dpkg to finish rather than failing ("Could not get
# lock"). Sourced by scripts/dev and bench/lib.sh.
#
#   need_pkgs PKG...   install the PKGs not installed (as root, or through
#                      sudo); fails if apt-get install does
#
# apt-get install waits for dpkg's locks itself (DPkg::Lock::Timeout);
# apt-get update takes the lock of the package lists, which that option
# does not cover (apt 2.6 fails at once), and an install that downloads
# takes the archives' lock: both are tried again, every APT_RETRY seconds,
# while another apt holds a lock. APT_LOCK_WAIT: how long to wait for
# locks in all, in seconds (default 600).

APT_LOCK_WAIT=${APT_LOCK_WAIT:-600}
APT_RETRY=${APT_RETRY:-2}

# apt_get ARGS...: "${apt_sudo[@]}" apt-get ARGS, again while it fails for
# another apt's lock (until APT_LOCK_WAIT has passed); its output on
# standard error if it fails in the end.
apt_sudo=()
apt_get() {
	local end=$((SECONDS + APT_LOCK_WAIT)) out said=
	until out=$("${apt_sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
			apt-get -o DPkg::Lock::Timeout="$APT_LOCK_WAIT" "$@" 2>&1 > /dev/null); do
		if ! grep -q "Could not get lock" <<< "$out" || [ $SECONDS -ge $end ]; then
			printf '%s\n' "$out" >&2
			return 1
		fi
		[ -n "$said" ] || echo "apt: another apt holds a lock: waiting for it (apt-get $1)" >&2
		said=1
		sleep "$APT_RETRY"
	done
}

need_pkgs() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	command -v apt-get > /dev/null || { echo "apt: missing ${missing[*]}, and no apt-get" >&2; return 1; }
	apt_sudo=()
	[ "$(id -u)" -eq 0 ] || apt_sudo=(sudo)
	echo "apt: installing ${missing[*]}" >&2
	# stale lists may still hold the packages: a failed update is said, not fatal
	apt_get update -qq || echo "apt: apt-get update failed: installing from the lists there are" >&2
	apt_get install -y -qq --no-install-recommends "${missing[@]}"
}
