# tfmatrix air-gapped base: a Debian rootfs made with debootstrap on this host
# (see tfmatrix/bases.py); stands in for debian:bookworm-slim.
FROM scratch
ADD rootfs.tar /
ENV LANG=C.UTF-8
CMD ["bash"]
