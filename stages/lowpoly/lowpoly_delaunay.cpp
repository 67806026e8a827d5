#include "stages/lowpoly/lowpoly_delaunay.h"

#include <algorithm>
#include <cmath>

#include "stages/lowpoly/lowpoly_predicates.h"

namespace sp::lowpoly {

namespace {

int64_t orient_p(uint32_t a, uint32_t b, uint32_t c) { return orient_packed(a, b, c); }

}  // namespace

int incircle_sign(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return in_circle(a, b, c, d); }
int incircle_perturbed(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return in_circle_perturbed(a, b, c, d); }

void Delaunay::set(int t, int v0, int v1, int v2, int n0, int n1, int n2) {
  int32_t* v = &verts_[3 * size_t(t)];
  int32_t* n = &adj_[3 * size_t(t)];
  v[0] = v0, v[1] = v1, v[2] = v2;
  n[0] = n0, n[1] = n1, n[2] = n2;
}

void Delaunay::relink(int neighbour, int from, int to) {
  if (neighbour < 0) return;
  for (int k = 0; k < 3; ++k)
    if (adj_[3 * size_t(neighbour) + k] == from) adj_[3 * size_t(neighbour) + k] = to;
}

int Delaunay::new_triangle() {
  verts_.resize(verts_.size() + 3);
  adj_.resize(adj_.size() + 3);
  return int(verts_.size() / 3) - 1;
}

int Delaunay::locate(int start, int px, int py) {
  const int triangles = int(verts_.size() / 3);
  int t = start;
  // The visibility walk terminates on Delaunay triangulations; the cap is a
  // guard, with a full scan behind it.
  for (int step = 0; step < 4 * triangles + 64; ++step) {
    int next = -1;
    for (int k = 0; k < 3 && next < 0; ++k) {
      const int i = (k + step) % 3;
      const uint32_t b = pts_[verts_[3 * size_t(t) + (i + 1) % 3]], c = pts_[verts_[3 * size_t(t) + (i + 2) % 3]];
      if (orient(unpack_x(b), unpack_y(b), unpack_x(c), unpack_y(c), px, py) < 0) next = adj_[3 * size_t(t) + i];
    }
    if (next < 0) return t;
    t = next;
    ++walk_steps_;
  }
  for (t = 0; t < triangles; ++t) {
    bool inside = true;
    for (int i = 0; i < 3 && inside; ++i) {
      const uint32_t b = pts_[verts_[3 * size_t(t) + (i + 1) % 3]], c = pts_[verts_[3 * size_t(t) + (i + 2) % 3]];
      inside = orient(unpack_x(b), unpack_y(b), unpack_x(c), unpack_y(c), px, py) >= 0;
    }
    if (inside) return t;
  }
  return -1;
}

void Delaunay::legalize(int first) {
  stack_.clear();
  stack_.push_back(first);
  while (!stack_.empty()) {
    const int t = stack_.back();
    stack_.pop_back();
    const int n = adj_[3 * size_t(t)];
    if (n < 0) continue;
    int j = 0;
    while (adj_[3 * size_t(n) + j] != t) ++j;
    const int p = verts_[3 * size_t(t)], b = verts_[3 * size_t(t) + 1], c = verts_[3 * size_t(t) + 2];
    const int d = verts_[3 * size_t(n) + j];
    if (incircle_perturbed(pts_[p], pts_[b], pts_[c], pts_[d]) <= 0) continue;
    // t = (p, b, c) and n = (d, c, b) become (p, b, d) and (p, d, c).
    const int tb = adj_[3 * size_t(t) + 1], tc = adj_[3 * size_t(t) + 2];
    const int nc = adj_[3 * size_t(n) + (j + 1) % 3], nb = adj_[3 * size_t(n) + (j + 2) % 3];
    set(t, p, b, d, nc, n, tc);
    set(n, p, d, c, nb, tb, t);
    relink(nc, n, t);
    relink(tb, t, n);
    ++flips_;
    stack_.push_back(t);
    stack_.push_back(n);
  }
}

void Delaunay::insert(int p, int t) {
  const uint32_t q = pts_[p];
  int zero = -1, zeros = 0;
  for (int i = 0; i < 3; ++i) {
    const uint32_t b = pts_[verts_[3 * size_t(t) + (i + 1) % 3]], c = pts_[verts_[3 * size_t(t) + (i + 2) % 3]];
    if (orient_p(b, c, q) == 0) zero = i, ++zeros;
  }
  if (zeros == 0) {
    const int a = verts_[3 * size_t(t)], b = verts_[3 * size_t(t) + 1], c = verts_[3 * size_t(t) + 2];
    const int n0 = adj_[3 * size_t(t)], n1 = adj_[3 * size_t(t) + 1], n2 = adj_[3 * size_t(t) + 2];
    const int t1 = new_triangle(), t2 = new_triangle();
    set(t, p, b, c, n0, t1, t2);
    set(t1, p, c, a, n1, t2, t);
    set(t2, p, a, b, n2, t, t1);
    relink(n1, t, t1);
    relink(n2, t, t2);
    legalize(t);
    legalize(t1);
    legalize(t2);
    return;
  }
  // On the edge opposite vertex `zero`: a -> (u, w) with p between u and w.
  const int i = zero;
  const int a = verts_[3 * size_t(t) + i], u = verts_[3 * size_t(t) + (i + 1) % 3], w = verts_[3 * size_t(t) + (i + 2) % 3];
  const int n = adj_[3 * size_t(t) + i], nu = adj_[3 * size_t(t) + (i + 1) % 3], nw = adj_[3 * size_t(t) + (i + 2) % 3];
  const int bt = new_triangle();
  if (n < 0) {
    set(t, p, a, u, nw, -1, bt);
    set(bt, p, w, a, nu, t, -1);
    relink(nu, t, bt);
    legalize(t);
    legalize(bt);
    return;
  }
  int j = 0;
  while (adj_[3 * size_t(n) + j] != t) ++j;
  const int d = verts_[3 * size_t(n) + j];
  const int mw = adj_[3 * size_t(n) + (j + 1) % 3], mu = adj_[3 * size_t(n) + (j + 2) % 3];
  const int dt = new_triangle();
  set(t, p, a, u, nw, dt, bt);
  set(bt, p, w, a, nu, t, n);
  set(n, p, d, w, mu, bt, dt);
  set(dt, p, u, d, mw, n, t);
  relink(nu, t, bt);
  relink(mw, n, dt);
  legalize(t);
  legalize(bt);
  legalize(n);
  legalize(dt);
}

bool Delaunay::triangulate(const std::vector<uint32_t>& points, int width, int height, std::vector<Triangle>& out) {
  out.clear();
  walk_steps_ = flips_ = 0;
  pts_ = points;
  const int count = int(points.size());
  int corner[4] = {-1, -1, -1, -1};  // (0,0), (W,0), (W,H), (0,H)
  for (int k = 0; k < count; ++k) {
    const int x = unpack_x(points[k]), y = unpack_y(points[k]);
    if (x > width || y > height) return false;
    if ((x == 0 || x == width) && (y == 0 || y == height)) corner[(y == 0) ? (x == 0 ? 0 : 1) : (x == 0 ? 3 : 2)] = k;
  }
  if (corner[0] < 0 || corner[1] < 0 || corner[2] < 0 || corner[3] < 0) return false;
  verts_.assign(6, 0);
  adj_.assign(6, -1);
  verts_.reserve(3 * (2 * size_t(count) + 2));
  adj_.reserve(3 * (2 * size_t(count) + 2));
  // (W,0), (W,H), (0,0) and (0,0), (W,H), (0,H); the diagonal is then checked
  // like any other edge (the corners are co-circular: the perturbation decides).
  set(0, corner[1], corner[2], corner[0], 1, -1, -1);
  set(1, corner[0], corner[2], corner[3], -1, -1, 0);
  legalize(0);

  // Serpentine order over cells of about two points each, by counting sort.
  const double area = double(width) * height;
  const int cell = std::max(1, int(std::sqrt(2.0 * area / std::max(count, 1))));
  const int cols = width / cell + 1, rows = height / cell + 1;
  std::vector<int32_t> start(size_t(cols) * rows + 1, 0);
  order_.resize(size_t(count));
  auto cell_of = [&](uint32_t p) {
    const int cx = unpack_x(p) / cell, cy = unpack_y(p) / cell;
    return size_t(cy) * cols + (cy % 2 ? cols - 1 - cx : cx);
  };
  for (int k = 0; k < count; ++k) ++start[cell_of(points[k]) + 1];
  for (size_t c = 1; c < start.size(); ++c) start[c] += start[c - 1];
  for (int k = 0; k < count; ++k) order_[start[cell_of(points[k])]++] = uint64_t(k);

  int last = 0;
  for (int k = 0; k < count; ++k) {
    const int p = int(order_[k]);
    if (p == corner[0] || p == corner[1] || p == corner[2] || p == corner[3]) continue;
    const int t = locate(last, unpack_x(points[p]), unpack_y(points[p]));
    if (t < 0) return false;
    for (int i = 0; i < 3; ++i)
      if (pts_[verts_[3 * size_t(t) + i]] == points[p]) return false;  // duplicate point
    insert(p, t);
    last = t;
  }
  const size_t triangles = verts_.size() / 3;
  out.resize(triangles);
  for (size_t t = 0; t < triangles; ++t)
    out[t] = {pts_[verts_[3 * t]], pts_[verts_[3 * t + 1]], pts_[verts_[3 * t + 2]]};
  return true;
}

}  // namespace sp::lowpoly
