#include "stages/pencil/pencil_tone.h"

#include <cmath>
#include <cstring>

namespace sp::pencil {

double tone_layer_bright(double v) {
  return v <= 255.0 ? std::exp(-(255.0 - v) / kSigmaBright) / kSigmaBright : 0.0;
}

double tone_layer_mid(double v) {
  return (v >= kMidLow && v <= kMidHigh) ? 1.0 / (kMidHigh - kMidLow) : 0.0;
}

double tone_layer_dark(double v) {
  const double d = v - kMuDark;
  return std::exp(-d * d / (2 * kSigmaDark * kSigmaDark)) / (std::sqrt(2 * 3.14159265358979323846) * kSigmaDark);
}

ToneTarget make_tone_target(const std::array<double, 3>& weights) {
  ToneTarget t;
  double z = 0;
  for (int v = 0; v < kLevels; ++v) {
    t.pdf[v] = weights[0] * tone_layer_bright(v) + weights[1] * tone_layer_mid(v) +
               weights[2] * tone_layer_dark(v);
    z += t.pdf[v];
  }
  for (double& p : t.pdf) p /= z;
  cumulate(t.pdf.data(), t.cdf.data());
  t.cdf[kLevels - 1] = 1.0;
  return t;
}

bool tone_preset(const char* name, std::array<double, 3>* weights) {
  if (!std::strcmp(name, "lu2012")) *weights = {52, 37, 11};
  else if (!std::strcmp(name, "dark")) *weights = {42, 29, 29};
  else if (!std::strcmp(name, "light")) *weights = {76, 22, 2};
  else return false;
  return true;
}

}  // namespace sp::pencil
